import AmodbHTTP
import AmodbModels
import AmodbProxy
import AmodbSandbox
import Testing

@Suite struct AuthenticationTests {
    @Test func requestWithoutKeyIsRefusedWith401() async throws {
        let response = await get(AmodbSandbox(), "/3/movie/550", bearer: nil)
        #expect(response.status == 401)
        let error = try decode(AmodbErrorBody.self, response)
        #expect(
            error == AmodbErrorBody(statusCode: 7, statusMessage: "Invalid API key: You must be granted a valid key."))
        #expect(response.headers["Content-Type"] == "application/json;charset=utf-8")
    }

    @Test func wrongBearerKeyIsRefusedWith401() async throws {
        let response = await get(AmodbSandbox(), "/3/movie/550", bearer: "not-the-key")
        #expect(response.status == 401)
        #expect(try decode(AmodbErrorBody.self, response).statusCode == 7)
    }

    @Test func bearerKeyIsAccepted() async throws {
        let response = await get(AmodbSandbox(), "/3/movie/550")
        #expect(response.status == 200)
        #expect(try decode(MovieDetails.self, response).title == "Fight Club")
    }

    @Test func bearerSchemeIsCaseInsensitive() async {
        let request = makeRequest("/3/movie/550", bearer: nil, headers: [("authorization", "bearer  \(testKey)")])
        #expect(await send(AmodbSandbox(), request).status == 200)
    }

    @Test func apiKeyQueryParameterIsAccepted() async throws {
        let response = await get(AmodbSandbox(), "/3/movie/550?api_key=\(testKey)", bearer: nil)
        #expect(response.status == 200)
        #expect(try decode(MovieDetails.self, response).id == 550)
    }

    @Test func wrongApiKeyQueryParameterIsRefused() async {
        #expect(await get(AmodbSandbox(), "/3/movie/550?api_key=nope", bearer: nil).status == 401)
    }

    @Test func otherAuthorizationSchemesPresentNoKey() async {
        let request = makeRequest("/3/movie/550", bearer: nil, headers: [("Authorization", "Basic \(testKey)")])
        #expect(await send(AmodbSandbox(), request).status == 401)
    }

    @Test func expiredKeyIsRefusedWith402() async throws {
        let sandbox = AmodbSandbox(configuration: .init(expiredKeys: ["old-plan"]))
        let response = await get(sandbox, "/3/trending/movie/week", bearer: "old-plan")
        #expect(response.status == 402)
        #expect(try decode(AmodbErrorBody.self, response).success == false)
    }

    @Test func additionalKeysAreAccepted() async {
        let sandbox = AmodbSandbox(configuration: .init(additionalKeys: ["second"]))
        #expect(await get(sandbox, "/3/movie/550", bearer: "second").status == 200)
    }

    @Test(arguments: [
        "/3/movie/550", "/3/movie/550?append_to_response=credits,ratings", "/3/trending/all/day?page=2",
        "/3/movie/1", "/3/nowhere", "/3/trending/movie/week?page=900", "/3/configuration",
    ])
    func presentedKeyNeverComesBack(target: String) async {
        let secret = "k-3f9a7c-secret"
        let sandbox = AmodbSandbox(configuration: .init(apiKey: secret, requestsPerMinute: 2))
        var responses: [HTTPResponse] = []
        for _ in 0..<3 { responses.append(await get(sandbox, target, bearer: secret)) }  // the third is over the limit
        responses.append(
            await get(sandbox, target + (target.contains("?") ? "&" : "?") + "api_key=\(secret)x", bearer: nil))
        responses.append(await get(sandbox, target, bearer: secret + "-wrong"))
        for response in responses {
            #expect(!response.text.contains(secret))
            #expect(!response.headerText.contains(secret))
        }
        #expect(responses.map(\.status).contains(429))
    }
}

extension AuthenticationTests {
    @Test(arguments: ["Bearer", "Bearer ", "Bearer sandbox-key extra", "sandbox-key", "Bearersandbox-key"])
    func malformedAuthorizationIsRefused(value: String) async {
        let request = makeRequest("/3/movie/550", bearer: nil, headers: [("Authorization", value)])
        #expect(await send(AmodbSandbox(), request).status == 401)
    }

    @Test func authorizationHeaderWinsOverApiKey() async {
        let request = makeRequest("/3/movie/550?api_key=\(testKey)", bearer: "wrong")
        #expect(await send(AmodbSandbox(), request).status == 401)
    }
}
