import AmodbModels
import AmodbProxy
import AmodbSandbox
import Testing

@Suite struct RoutingTests {
    @Test(arguments: [
        "/3/tv/abc", "/3/movie/abc", "/3/movie/0", "/3/movie/0550", "/movie/550", "/3", "/3/",
        "/3/trending/movie/month", "/3/trending/film/week", "/3/trending/movie/week/extra", "/4/movie/550",
        "/3/tv/0", "/3/person/-1", "/3/movie/popular/2", "/3/genre/tv/list", "/3/search/movie/", "/3/search/tv",
    ])
    func unknownPathIsAmodbsNotFound(path: String) async throws {
        let response = await get(AmodbSandbox(), path)
        #expect(response.status == 404)
        #expect(
            try decode(AmodbErrorBody.self, response)
                == AmodbErrorBody(
                    statusCode: 34, statusMessage: "The resource you requested could not be found."))
        #expect(response.headers["Cache-Control"] == "no-store")
    }

    @Test func movieMissingFromTheDataIsNotFound() async throws {
        let response = await get(AmodbSandbox(), "/3/movie/999999")
        #expect(response.status == 404)
        #expect(try decode(AmodbErrorBody.self, response).statusCode == 34)
    }

    @Test(arguments: ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "get"])
    func otherMethodsAreRefusedWith405(method: String) async throws {
        let response = await send(AmodbSandbox(), makeRequest("/3/movie/550", method: method))
        #expect(response.status == 405)
        #expect(response.headers["Allow"] == "GET, HEAD")
        #expect(try decode(AmodbErrorBody.self, response).success == false)
    }

    @Test func headIsAnsweredLikeGet() async {
        let sandbox = AmodbSandbox()
        let head = await send(sandbox, makeRequest("/3/movie/550", method: "HEAD"))
        let get = await get(sandbox, "/3/movie/550")
        #expect(head.status == 200)
        #expect(head.body == get.body)  // the server drops the body of a HEAD answer
    }

    @Test func malformedParametersAreRefusedWith400() async throws {
        let sandbox = AmodbSandbox()
        for target in [
            "/3/movie/550?language=not a tag", "/3/movie/550?append_to_response=credits&append_to_response=images",
            "/3/trending/all/day?language=en&language=de",
        ] {
            let response = await get(sandbox, target)
            #expect(response.status == 400)
            #expect(try decode(AmodbErrorBody.self, response).statusCode == 47)
        }
    }

    @Test func unknownParametersAreIgnored() async {
        #expect(await get(AmodbSandbox(), "/3/movie/550?region=US&include_adult=false").status == 200)
    }
}
