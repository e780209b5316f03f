import AmodbModels
import AmodbSandbox
import AmodbTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite(.timeLimit(.minutes(1)))
struct ServingTests {
    /// A session that caches nothing, so every call reaches the sandbox.
    private static func session() -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.timeoutIntervalForRequest = 10
        return URLSession(configuration: configuration)
    }

    private static func request(_ url: String, key: String? = "sandbox-key") throws -> URLRequest {
        var request = URLRequest(url: try #require(URL(string: url)))
        if let key { request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization") }
        return request
    }

    @Test func servesAmodbOverARealSocketOnAnEphemeralPort() async throws {
        let sandbox = AmodbSandbox()
        let port = try sandbox.start(port: 0)
        try await withServer(sandbox) { sandbox in
            #expect(port > 0)
            #expect(sandbox.port == port)
            #expect(sandbox.baseURL == "http://127.0.0.1:\(port)/3")
            let session = Self.session()
            let (data, response) = try await session.data(
                for: Self.request(sandbox.baseURL + "/movie/550?append_to_response=credits"))
            let http = try #require(response as? HTTPURLResponse)
            #expect(http.statusCode == 200)
            #expect(http.value(forHTTPHeaderField: "X-RateLimit-Limit") == "40")
            #expect(http.value(forHTTPHeaderField: "Content-Type") == "application/json;charset=utf-8")
            let details = try JSONDecoder().decode(MovieDetails.self, from: data)
            #expect(details.title == "Fight Club")
            #expect(details.credits?.cast.isEmpty == false)

            let (_, refused) = try await session.data(
                for: Self.request(sandbox.baseURL + "/trending/all/day", key: nil))
            #expect((refused as? HTTPURLResponse)?.statusCode == 401)
            #expect(sandbox.requestCount(path: "/3/movie/550") == 1)
            #expect(sandbox.requestCount(path: "/3/trending/all/day") == 1)
            session.invalidateAndCancel()
        }
    }

    @Test func delayedAnswersArriveOverTheSocket() async throws {
        let sandbox = AmodbSandbox(configuration: .init(latency: .milliseconds(100)))
        _ = try sandbox.start()
        try await withServer(sandbox) { sandbox in
            let session = Self.session()
            let started = ContinuousClock.now
            let (data, response) = try await session.data(
                for: Self.request(sandbox.baseURL + "/trending/movie/week?page=2"))
            #expect(ContinuousClock.now - started >= .milliseconds(100))
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(try JSONDecoder().decode(TrendingPage.self, from: data).page == 2)
            session.invalidateAndCancel()
        }
    }

    @Test func requestsTheServerRefusesGetAmodbsErrorShape() async throws {
        let sandbox = AmodbSandbox()
        let port = try sandbox.start()
        try await withServer(sandbox) { sandbox in
            let response = try await offloaded { () -> RawHTTPResponse? in
                let client = try RawHTTPConnection(port: port)
                try client.send("GET /3/movie/550#top HTTP/1.1\r\nHost: x\r\n\r\n")
                return try client.readResponse()
            }
            #expect(response?.status == 400)
            #expect(response?.header("Content-Type") == "application/json;charset=utf-8")
            let body = try JSONDecoder().decode(AmodbErrorBody.self, from: Data(try #require(response?.body)))
            #expect(body.statusCode == 400)
            #expect(body.statusMessage == "Invalid request target.")
            #expect(sandbox.totalRequestCount == 0, "refused before it reached the stand-in's answers")
        }
    }

    @Test func droppedConnectionIsATransportError() async throws {
        let sandbox = AmodbSandbox()
        _ = try sandbox.start()
        try await withServer(sandbox) { sandbox in
            sandbox.script("/3/movie/550", .droppedConnection, times: 1)
            let session = Self.session()
            await #expect(throws: (any Error).self) {
                _ = try await session.data(for: Self.request(sandbox.baseURL + "/movie/550"))
            }
            let (_, response) = try await session.data(for: Self.request(sandbox.baseURL + "/movie/550"))
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            session.invalidateAndCancel()
        }
    }
}
