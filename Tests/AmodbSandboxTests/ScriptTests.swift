import AmodbHTTP
import AmodbModels
import AmodbProxy
import AmodbSandbox
import Foundation
import Testing

@Suite struct ScriptTests {
    @Test func scriptedStatusPlaysOnceThenNormalAnswersReturn() async throws {
        let sandbox = AmodbSandbox()
        sandbox.script("/3/movie/550", .status(500), times: 1)
        let failed = await get(sandbox, "/3/movie/550")
        #expect(failed.status == 500)
        #expect(try decode(AmodbErrorBody.self, failed).statusCode == 11)
        #expect(failed.headers["X-RateLimit-Limit"] == "40")
        #expect(await get(sandbox, "/3/movie/550").status == 200)
    }

    @Test(arguments: [400, 401, 402, 403, 404, 429, 500, 502, 503, 504])
    func scriptedStatusesAnswerWithAmodbErrorBodies(status: Int) async throws {
        let sandbox = AmodbSandbox()
        sandbox.script("/3/trending/movie/week", .status(status))
        let response = await get(sandbox, "/3/trending/movie/week")
        #expect(response.status == status)
        let error = try decode(AmodbErrorBody.self, response)
        #expect(!error.success)
        #expect(error.statusCode > 0)
        #expect(!error.statusMessage.isEmpty)
        #expect((response.headers["Retry-After"] != nil) == (status == 429))
    }

    @Test func scriptedRateLimitCarriesRetryAfter() async throws {
        let sandbox = AmodbSandbox()
        sandbox.script("/3/trending/all/day", .rateLimited(retryAfter: 7), times: 2)
        for _ in 0..<2 {
            let response = await get(sandbox, "/3/trending/all/day")
            #expect(response.status == 429)
            #expect(response.headers["Retry-After"] == "7")
            #expect(response.headers["X-RateLimit-Remaining"] == "0")
            #expect(try decode(AmodbErrorBody.self, response).statusCode == 25)
        }
        #expect(await get(sandbox, "/3/trending/all/day").status == 200)
    }

    @Test func scriptsForOnePathPlayInOrder() async {
        let sandbox = AmodbSandbox()
        sandbox.script("/3/movie/550", .status(502), times: 1)
        sandbox.script("/3/movie/550", .status(504), times: 2)
        var statuses: [Int] = []
        for _ in 0..<4 { statuses.append(await get(sandbox, "/3/movie/550").status) }
        #expect(statuses == [502, 504, 504, 200])
    }

    @Test func scriptWithoutCountPlaysUntilCleared() async {
        let sandbox = AmodbSandbox()
        sandbox.script("/3/movie/550?language=de-DE", .status(503))
        for _ in 0..<3 { #expect(await get(sandbox, "/3/movie/550").status == 503) }
        #expect(await get(sandbox, "/3/movie/680").status == 200)
        sandbox.clearScripts()
        #expect(await get(sandbox, "/3/movie/550").status == 200)
    }

    @Test func wildcardScriptAppliesToPathsWithoutTheirOwn() async {
        let sandbox = AmodbSandbox()
        sandbox.script("*", .status(500))
        sandbox.script("/3/movie/13", .status(404))
        #expect(await get(sandbox, "/3/movie/550").status == 500)
        #expect(await get(sandbox, "/3/trending/tv/day").status == 500)
        #expect(await get(sandbox, "/3/movie/13").status == 404)
    }

    @Test func scriptsWaitForAdmittedCalls() async {
        let sandbox = AmodbSandbox()
        sandbox.script("/3/movie/550", .status(500), times: 1)
        #expect(await get(sandbox, "/3/movie/550", bearer: "wrong").status == 401)
        #expect(await get(sandbox, "/3/movie/550").status == 500)
    }

    @Test func scriptedDelayDeliversLater() async throws {
        let sandbox = AmodbSandbox()
        sandbox.script("/3/movie/550", .delay(.milliseconds(200)), times: 1)
        let delivered = DeliveryBox()
        let started = ContinuousClock.now
        let immediate = sandbox.respond(to: makeRequest("/3/movie/550")) { { delivered.put($0) } }
        #expect(immediate == nil)
        let response = await delivered.take()
        #expect(ContinuousClock.now - started >= .milliseconds(200))
        #expect(response.status == 200)
        #expect(try decode(MovieDetails.self, response).id == 550)
        #expect(sandbox.respond(to: makeRequest("/3/movie/550")) { { _ in } } != nil)
    }

    @Test func configuredLatencyDelaysEveryAnswer() async {
        let sandbox = AmodbSandbox(configuration: .init(latency: .milliseconds(50)))
        let started = ContinuousClock.now
        #expect(sandbox.respond(to: makeRequest("/3/movie/550", bearer: nil)) { { _ in } } == nil)
        let response = await get(sandbox, "/3/trending/movie/week")
        #expect(response.status == 200)
        #expect(ContinuousClock.now - started >= .milliseconds(50))
    }

    @Test func truncatedJSONIsNotDecodable() async throws {
        let sandbox = AmodbSandbox()
        let whole = await get(sandbox, "/3/trending/movie/week")
        sandbox.script("/3/trending/movie/week", .truncatedJSON, times: 1)
        let cut = await get(sandbox, "/3/trending/movie/week")
        #expect(cut.status == 200)
        #expect(cut.body.count == whole.body.count / 2)
        #expect(cut.body == Array(whole.body.prefix(cut.body.count)))
        #expect(cut.connection == .asRequested)
        #expect(throws: (any Error).self) { try decode(TrendingPage.self, cut) }
    }

    @Test func droppedConnectionSendsHalfTheBodyThenCloses() async {
        let sandbox = AmodbSandbox()
        sandbox.script("/3/movie/550", .droppedConnection, times: 1)
        let response = await get(sandbox, "/3/movie/550")
        #expect(response.status == 200)
        #expect(response.connection == .abortAfterBodyBytes(response.body.count / 2))
        #expect(await get(sandbox, "/3/movie/550").connection == .asRequested)
    }

    @Test func scriptedBodyIsAnsweredExactly() async {
        let sandbox = AmodbSandbox()
        let json = #"{"page":1,"results":[],"total_pages":0,"total_results":0}"#
        sandbox.script("/3/trending/tv/week", .body(status: 200, json: json))
        let response = await get(sandbox, "/3/trending/tv/week")
        #expect(response.status == 200)
        #expect(response.text == json)
        #expect(response.headers["Content-Type"] == "application/json;charset=utf-8")
    }

    @Test func requestsAreCountedPerPathBeforeAnyDecision() async {
        let sandbox = AmodbSandbox(configuration: .init(requestsPerMinute: 2))
        _ = await get(sandbox, "/3/movie/550")
        _ = await get(sandbox, "/3/movie/550?language=de-DE")
        _ = await get(sandbox, "/3/movie/550")  // over the limit
        _ = await get(sandbox, "/3/movie/550", bearer: nil)  // no key
        _ = await get(sandbox, "/3/trending/movie/day", bearer: "wrong")
        #expect(sandbox.requestCount(path: "/3/movie/550") == 4)
        #expect(sandbox.requestCount(path: "/3/trending/movie/day") == 1)
        #expect(sandbox.requestCount(path: "/3/movie/680") == 0)
        #expect(sandbox.totalRequestCount == 5)
        sandbox.resetCounters()
        #expect(sandbox.totalRequestCount == 0)
        #expect(sandbox.requestCount(path: "/3/movie/550") == 0)
        #expect(sandbox.receivedRequests.isEmpty)
    }

    @Test func receivedRequestsShowWhatWasSent() async throws {
        let sandbox = AmodbSandbox()
        _ = await send(
            sandbox,
            makeRequest(
                "/3/movie/550?language=de-DE&append_to_response=credits",
                headers: [("User-Agent", "amodb-proxy")]))
        let received = try #require(sandbox.receivedRequests.first)
        #expect(received.method == "GET")
        #expect(received.path == "/3/movie/550")
        #expect(received.target == "/3/movie/550?language=de-DE&append_to_response=credits")
        #expect(received.queryValue("language") == "de-DE")
        #expect(received.queryValue("api_key") == nil)
        #expect(received.headers["Authorization"] == "Bearer \(testKey)")
        #expect(received.headers["User-Agent"] == "amodb-proxy")
    }

    @Test func recordedRequestsAreCapped() async {
        let sandbox = AmodbSandbox(configuration: .init(requestsPerMinute: 100, recordLimit: 3))
        for id in [550, 680, 13, 155, 27205] { _ = await get(sandbox, "/3/movie/\(id)") }
        #expect(sandbox.receivedRequests.map(\.path) == ["/3/movie/13", "/3/movie/155", "/3/movie/27205"])
        #expect(sandbox.totalRequestCount == 5)
    }
}

/// Hands one delivered response to an awaiting test.
final class DeliveryBox: Sendable {
    private let stream: AsyncStream<HTTPResponse>
    private let continuation: AsyncStream<HTTPResponse>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream(of: HTTPResponse.self)
    }

    func put(_ response: HTTPResponse) {
        continuation.yield(response)
    }

    func take() async -> HTTPResponse {
        for await response in stream { return response }
        Issue.record("the stream finished without a response")
        return HTTPResponse(status: 0)
    }
}
