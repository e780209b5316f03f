import AmodbClient
import AmodbModels
import AmodbProxy
import AmodbSandbox
import AmodbTestSupport
import Foundation
import Testing

@Suite(.timeLimit(.minutes(2)))
struct ProxyIntegrationTests {
    @Test func servesADecodedTrendingPageThroughTheProxy() async throws {
        let setup = try SandboxedProxy()
        try await withServer(setup) { setup in
            let page = try await setup.client().trending(.movie, .week)
            #expect(page.page == 1)
            #expect(page.results.count == 20)
            #expect(page.results.allSatisfy { if case .movie = $0 { true } else { false } })
            let mixed = try await setup.client().trending(.all, .day, page: 2)
            #expect(mixed.page == 2)
            #expect(mixed.results.count == 20)
        }
    }

    @Test func servesMovieDetailsWithCreditsAndRatings() async throws {
        let setup = try SandboxedProxy()
        try await withServer(setup) { setup in
            let movie = try await setup.client().movie(id: 550, appendToResponse: ["credits", "ratings"])
            #expect(movie.id == 550)
            #expect(movie.title == "Fight Club")
            #expect(movie.credits?.cast.isEmpty == false)
            #expect(movie.credits?.crew.isEmpty == false)
            #expect(movie.ratings?.imdb != nil)
            let plain = try await setup.client().movie(id: 550)
            #expect(plain.credits == nil)
            #expect(plain.ratings == nil)
        }
    }

    @Test func servesLocalizedTitles() async throws {
        let setup = try SandboxedProxy()
        try await withServer(setup) { setup in
            // The Godfather has a German title in the stand-in's catalogue (Fight Club has none).
            let german = try await setup.client().movie(id: 238, language: "de-DE")
            let english = try await setup.client().movie(id: 238, language: "en-US")
            #expect(german.title == "Der Pate")
            #expect(english.title == "The Godfather")
            #expect(
                setup.sandbox.receivedRequests.map { $0.queryValue("language") } == ["de-DE", nil],
                "en-US is amodb's default: not sent")
        }
    }

    @Test func cachesOneAnswerPerPathForEveryClient() async throws {
        let setup = try SandboxedProxy()
        try await withServer(setup) { setup in
            let client = setup.client()
            let request = try AmodbRequest(route: .trending(.tv, .week))
            let first = try await client.response(for: request)
            let second = try await client.response(for: request)
            let third = try await setup.client().response(for: request)
            #expect(first.headers["Cache-Status"]?.contains("fwd=miss") == true)
            #expect(second.headers["Cache-Status"]?.hasPrefix("amodb-proxy; hit") == true)
            #expect(third.body == first.body)
            #expect(setup.sandbox.requestCount(path: "/3/trending/tv/week") == 1)
        }
    }

    @Test func hundredConcurrentClientsCauseOneUpstreamCall() async throws {
        let setup = try SandboxedProxy()
        try await withServer(setup) { setup in
            // amodb holds its answer until all 100 clients are waiting on the one call, each
            // on a connection of its own (URLSession would queue them behind a few connections).
            setup.sandbox.hold()
            let titles = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<100 {
                    group.addTask {
                        let response = try await setup.harness.get("/3/movie/680?append_to_response=credits")
                        return try JSONDecoder().decode(MovieDetails.self, from: Data(response.body)).title
                    }
                }
                #expect(
                    try await eventually {
                        guard setup.sandbox.heldCount == 1 else { return false }
                        return try await setup.harness.metrics().value(
                            "amodb_proxy_cache_events_total", ["event": "collapsed"]) == 99
                    })
                setup.sandbox.release()
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(titles.count == 100)
            #expect(Set(titles).count == 1)
            #expect(setup.sandbox.requestCount(path: "/3/movie/680") == 1)
        }
    }

    @Test func sendsTheKeyAsBearerAndNeverTheClientsCredentials() async throws {
        let setup = try SandboxedProxy()
        try await withServer(setup) { setup in
            let response = try await setup.harness.get(
                "/3/movie/550?api_key=clients-own-key&language=fr-FR",
                headers: ["Authorization": "Bearer clients-token", "Cookie": "session=1"])
            #expect(response.status == 200)
            let received = try #require(setup.sandbox.receivedRequests.first)
            #expect(received.headers.values("Authorization") == ["Bearer \(ProxyHarness.key)"])
            #expect(received.headers["Cookie"] == nil)
            #expect(received.queryValue("api_key") == nil)
            #expect(received.target == "/3/movie/550?language=fr-FR")
        }
    }

    @Test func aBasePathPrefixOnTheUpstreamIsKept() async throws {
        // The stand-in serves under /3; a prefix that does not exist there proves it is sent.
        let setup = try SandboxedProxy { $0.upstreamURL = $0.upstreamURL.replacingOccurrences(of: "/3", with: "/x/3") }
        try await withServer(setup) { setup in
            let response = try await setup.harness.get("/3/movie/550")
            #expect(response.status == 404)
            #expect(setup.sandbox.receivedRequests.first?.path == "/x/3/movie/550")
        }
    }

    struct Failure: Sendable, CustomTestStringConvertible {
        let name: String
        let behaviour: Behaviour
        let status: Int
        var testDescription: String { name }
    }

    static let failures: [Failure] = [
        Failure(name: "amodb 500 → 502", behaviour: .status(500), status: 502),
        Failure(name: "amodb 502 → 502", behaviour: .status(502), status: 502),
        Failure(name: "amodb 503 → 502", behaviour: .status(503), status: 502),
        Failure(name: "amodb 504 → 504", behaviour: .status(504), status: 504),
        Failure(name: "amodb 401 → 502", behaviour: .status(401), status: 502),
        Failure(name: "amodb 402 → 502", behaviour: .status(402), status: 502),
        Failure(name: "truncated JSON → 502", behaviour: .truncatedJSON, status: 502),
        Failure(name: "connection dropped mid-body → 502", behaviour: .droppedConnection, status: 502),
        Failure(
            name: "not the route's shape → 502", behaviour: .body(status: 200, json: #"{"unexpected":true}"#),
            status: 502),
    ]

    @Test(arguments: failures)
    func mapsEachUpstreamFailureToAClearJSONError(_ failure: Failure) async throws {
        let setup = try SandboxedProxy()
        try await withServer(setup) { setup in
            setup.sandbox.script("/3/trending/movie/day", failure.behaviour)

            let response = try await setup.harness.get("/3/trending/movie/day")
            #expect(response.status == failure.status)
            let body = try JSONDecoder().decode(AmodbErrorBody.self, from: Data(response.body))
            #expect(!body.statusMessage.isEmpty)
            #expect(body.statusCode == failure.status)
            #expect(!response.text.contains(ProxyHarness.key))

            // What an app sees through AmodbClient: a typed error carrying the status.
            let error = await #expect(throws: AmodbClientError.self) {
                _ = try await setup.client().trending(.movie, .day)
            }
            #expect(error?.status == failure.status)
            #expect(setup.harness.proxy.cache.usage.entries == 0)
        }
    }

    @Test func aWrongKeyIsTheOperatorsProblemLoggedLoudlyWithoutTheKey() async throws {
        let setup = try SandboxedProxy(sandbox: .init(apiKey: "the-real-key"))
        try await withServer(setup) { setup in
            let response = try await setup.harness.get("/3/trending/person/week")
            #expect(response.status == 502)
            #expect(response.text.contains("credentials"))
            let errors = setup.logLines.filter { $0.contains(#""level":"error""#) }
            #expect(errors.contains { $0.contains("401") && $0.contains("AMODB_KEY") })
            #expect(!setup.logLines.contains { $0.contains(ProxyHarness.key) })
        }
    }

    @Test func anExpiredPlanIsAGatewayError() async throws {
        let setup = try SandboxedProxy(sandbox: .init(apiKey: "other", expiredKeys: [ProxyHarness.key]))
        try await withServer(setup) { setup in
            let response = try await setup.harness.get("/3/trending/person/week")
            #expect(response.status == 502)
            #expect(setup.logLines.contains { $0.contains("402") })
        }
    }

    @Test func retriesAfterAmodbsRetryAfterAndSucceeds() async throws {
        let setup = try SandboxedProxy()
        try await withServer(setup) { setup in
            setup.sandbox.script("/3/trending/tv/day", .rateLimited(retryAfter: 1), times: 1)

            // The answer waits out the second amodb asked for; the client's default 10 s
            // was once not enough when the whole suite starts at once on two cores.
            let page = try await setup.client(timeout: 30).trending(.tv, .day)
            #expect(page.results.count == 20)
            #expect(setup.sandbox.requestCount(path: "/3/trending/tv/day") == 2)
        }
    }

    @Test func answers503WithRetryAfterWhenAmodbStaysRateLimited() async throws {
        let setup = try SandboxedProxy()
        try await withServer(setup) { setup in
            setup.sandbox.script("/3/trending/tv/day", .rateLimited(retryAfter: 1))

            let response = try await setup.harness.get("/3/trending/tv/day")
            #expect(response.status == 503)
            #expect(response.header("Retry-After") == "1")
            #expect(setup.sandbox.requestCount(path: "/3/trending/tv/day") == 3)
        }
    }

    @Test func theStandInsOwnRateLimitIsHonoured() async throws {
        let setup = try SandboxedProxy(sandbox: .init(apiKey: ProxyHarness.key, requestsPerMinute: 3)) {
            $0.retryAfterCap = 0  // amodb's Retry-After here is up to a minute: pass it on at once
        }
        try await withServer(setup) { setup in
            for id in [550, 680, 13] { #expect(try await setup.harness.get("/3/movie/\(id)").status == 200) }
            let limited = try await setup.harness.get("/3/movie/155")
            #expect(limited.status == 503)
            #expect(Int(limited.header("Retry-After") ?? "") ?? 0 >= 1)
            #expect(try await setup.harness.get("/3/movie/550").status == 200, "cached answers keep flowing")
        }
    }

    @Test func aSlowAmodbIsAGatewayTimeout() async throws {
        let setup = try SandboxedProxy { $0.upstreamTimeout = 0.5 }
        try await withServer(setup) { setup in
            setup.sandbox.script("/3/movie/550", .delay(.seconds(2)), times: 1)

            let response = try await setup.harness.get("/3/movie/550")
            #expect(response.status == 504)
        }
    }

    @Test func anUnreachableAmodbIsABadGateway() async throws {
        let harness = try ProxyHarness(
            .live, configuration: ProxyHarness.configuration(upstreamURL: "http://127.0.0.1:1/3"))
        try await withServer(harness) { harness in
            let response = try await harness.get("/3/movie/550")
            #expect(response.status == 502)
            #expect(response.text.contains("could not be reached"))
        }
    }

    @Test func unknownRoutesNeverReachAmodb() async throws {
        let setup = try SandboxedProxy()
        try await withServer(setup) { setup in
            for target in [
                "/3/movie/popular", "/3/search/movie?query=fight", "/3/tv/1399", "/3/movie/550/credits",
                "/3/trending/movie/year",
            ] {
                let response = try await setup.client().sendRaw(pathAndQuery: String(target.dropFirst(2)))
                #expect(response.status == 404, "\(target)")
            }
            #expect(setup.sandbox.totalRequestCount == 0)
        }
    }
}
