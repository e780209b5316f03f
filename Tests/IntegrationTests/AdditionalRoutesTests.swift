import AmodbClient
import AmodbModels
import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

/// The routes `RouteTable` does not serve by default: off, each is the same 404 as any path
/// the proxy does not forward, and never reaches amodb; turned on by name (`AMODB_ROUTES`),
/// each is forwarded and kept as the others are. A search is canonical before the lookup,
/// refused when it is no search, and each client's misses of it take from a share of their own.
@Suite(.timeLimit(.minutes(2)))
struct AdditionalRoutesTests {
    /// A path of each route served only when turned on, and a path of it amodb answers.
    static let optional: [(name: String, target: String)] = [
        ("movie/popular", "/3/movie/popular"), ("movie/top_rated", "/3/movie/top_rated?page=2"),
        ("movie/now_playing", "/3/movie/now_playing"), ("movie/upcoming", "/3/movie/upcoming?language=de"),
        ("tv", "/3/tv/1396"), ("person", "/3/person/287"), ("genre/movie/list", "/3/genre/movie/list"),
        ("search/movie", "/3/search/movie?query=matrix"),
    ]

    @Test func everyOptionalRouteOfTheTableIsCoveredHere() {
        let covered = Set(Self.optional.map(\.name))
        #expect(covered == Set(RouteTable.entries.filter { !$0.byDefault }.map(\.name)))
    }

    /// The 404's message for `path` as an unserved path's: the same whether a route is off or
    /// was never a route.
    private static func unservedMessage(_ response: RawHTTPResponse) throws -> String {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        return try #require(object["status_message"] as? String)
    }

    @Test("A route that is off is no route", arguments: optional)
    func aRouteThatIsOffIsTheSameNotFoundAsAnyUnservedPath(name: String, target: String) async throws {
        try await withServer(try SandboxedProxy()) { setup in
            let off = try await setup.harness.get(target)
            #expect(off.status == 404)
            let path = String(target.prefix { $0 != "?" })
            let message = try Self.unservedMessage(off)
            let never = try Self.unservedMessage(try await setup.harness.get("/3/never/a/route"))
            #expect(message == never.replacingOccurrences(of: "/3/never/a/route", with: path), "\(message)")
            let listed = try #require(message.range(of: "it serves ")).upperBound
            let served = try #require(RouteTable.entry(named: name)).served
            #expect(!message[listed...].contains(served), "an optional route is not listed while off: \(message)")
            #expect(setup.sandbox.totalRequestCount == 0, "never sent upstream")
        }
    }

    @Test("A route turned on is forwarded once and then a hit", arguments: optional)
    func aRouteTurnedOnIsServedAndKept(name: String, target: String) async throws {
        try await withServer(try SandboxedProxy(adjust: { $0.extraRoutes = [RouteTable.entry(named: name)!.kind] })) {
            setup in
            let first = try await setup.harness.get(target)
            #expect(first.status == 200, "\(first.text)")
            #expect(first.header("Cache-Status")?.contains("fwd=miss") == true)
            let second = try await setup.harness.get(target)
            #expect(second.status == 200)
            #expect(second.header("Cache-Status")?.contains("hit") == true, "\(second.header("Cache-Status") ?? "")")
            #expect(second.body == first.body)
            #expect(setup.sandbox.totalRequestCount == 1)
            let entry = try #require(RouteTable.entry(named: name))
            let served = try await setup.harness.metrics().value(
                "amodb_proxy_requests_total", ["route": "/3" + entry.template, "status": "200", "cache": "hit"])
            #expect(served == 1)
            // The unserved path's 404 now lists it.
            let message = try Self.unservedMessage(try await setup.harness.get("/3/never/a/route"))
            #expect(message.contains(entry.served), "\(message)")
        }
    }

    /// The routes a configuration with `routes` as `AMODB_ROUTES` turns on.
    private static func routes(_ routes: String) throws -> Set<Route.Kind> {
        let command = try ConfigurationLoader.load(
            arguments: [], environment: ["AMODB_KEY": "k", "AMODB_CONFIG": "/dev/null", "AMODB_ROUTES": routes])
        guard case .serve(let configuration) = command else { throw ConfigurationError("not a configuration") }
        return Set(configuration.extraRoutes)
    }

    @Test func theSettingTurnsRoutesOnByName() throws {
        #expect(try Self.routes("tv, search/movie") == [.tv, .searchMovie])
        #expect(try Self.routes("all") == Set(RouteTable.entries.filter { !$0.byDefault }.map(\.kind)))
        #expect {
            _ = try Self.routes("tv/season")
        } throws: { error in
            "\(error)".contains("AMODB_ROUTES must name routes among movie/popular")
        }
    }

    @Test func searchesAmodbAnswersAlikeShareOneCall() async throws {
        try await withServer(try SandboxedProxy(adjust: { $0.extraRoutes = [.searchMovie] })) { setup in
            let first = try await setup.harness.get("/3/search/movie?query=The%20Matrix")
            #expect(first.status == 200)
            for spelling in ["the+matrix", "%20THE%20%20%20matrix%20", "the+++Matrix", "The%20Matrix&page=1"] {
                let again = try await setup.harness.get("/3/search/movie?query=" + spelling)
                #expect(again.status == 200)
                #expect(again.body == first.body, "\(spelling)")
            }
            #expect(setup.sandbox.totalRequestCount == 1, "one search, one call")
            let results = try JSONDecoder().decode(MoviePage.self, from: Data(first.body)).results
            #expect(results.contains { $0.id == 603 }, "the stand-in finds The Matrix")
            let forwarded = try #require(setup.sandbox.receivedRequests.first)
            #expect(forwarded.target.hasSuffix("/search/movie?query=the%20matrix"), "\(forwarded.target)")
        }
    }

    @Test(
        "A request that is no search is refused before amodb",
        arguments: [
            ("/3/search/movie", "query is required"), ("/3/search/movie?query=", "query must not be empty"),
            ("/3/search/movie?query=%20%20", "query must not be empty"),
            ("/3/search/movie?query=" + String(repeating: "x", count: 101), "query must be at most 100 bytes"),
            ("/3/search/movie?query=a&query=b", "query is given more than once"),
        ])
    func aBadSearchIsABadRequest(target: String, problem: String) async throws {
        try await withServer(try SandboxedProxy(adjust: { $0.extraRoutes = [.searchMovie] })) { setup in
            let answer = try await setup.harness.get(target)
            #expect(answer.status == 400)
            #expect(try Self.unservedMessage(answer) == "Invalid parameter: \(problem).")
            #expect(setup.sandbox.totalRequestCount == 0)
        }
    }

    /// At 40 calls a minute and a search share of 0.05, each client may cause two searches'
    /// calls a minute: a third new search from it is refused (its other misses are not),
    /// and another client's search is not.
    @Test func eachClientsSearchesTakeASmallerShareOfTheirOwn() async throws {
        try await withServer(
            try SandboxedProxy(adjust: {
                $0.extraRoutes = [.searchMovie]
                $0.rateLimit = 40
                $0.searchShare = 0.05
                $0.trustedProxies = ["127.0.0.1/32"]
                $0.rateLimitExempt = []
            })
        ) { setup in
            let alice = ["X-Forwarded-For": "192.0.2.1"]
            #expect(try await setup.harness.get("/3/search/movie?query=a", headers: alice).status == 200)
            #expect(try await setup.harness.get("/3/search/movie?query=b", headers: alice).status == 200)
            let third = try await setup.harness.get("/3/search/movie?query=c", headers: alice)
            #expect(third.status == 503, "\(third.text)")
            #expect(third.header("Retry-After") != nil)
            #expect(try Self.unservedMessage(third).contains("share"))
            #expect(try Self.unservedMessage(third).contains("AMODB_SEARCH_SHARE"), "a search's own share is named too")
            #expect(try await setup.harness.get("/3/search/movie?query=a", headers: alice).status == 200, "a hit")
            #expect(try await setup.harness.get("/3/movie/550", headers: alice).status == 200, "not a search")
            let bob = ["X-Forwarded-For": "192.0.2.2"]
            #expect(try await setup.harness.get("/3/search/movie?query=c", headers: bob).status == 200)
            #expect(setup.sandbox.totalRequestCount == 4)
        }
    }

    @Test func theClientCallsEachRoute() async throws {
        try await withServer(try SandboxedProxy(adjust: { $0.extraRoutes = RouteTable.entries.map(\.kind) })) {
            setup in
            let client = setup.client()
            let popular = try await client.movieList(.popular)
            #expect(popular.results.count == 20)
            let popularity = popular.results.compactMap(\.popularity)
            #expect(popularity == popularity.sorted(by: >), "most popular first")
            #expect(try await client.tv(id: 1396).name == "Breaking Bad")
            #expect(try await client.person(id: 287).name == "Brad Pitt")
            #expect(try await client.movieGenres().genres.contains { $0.name == "Drama" })
            #expect(try await client.searchMovies("fight club").results.first?.id == 550)
            await #expect(throws: AmodbClientError.self) { try await client.tv(id: 999_999_999) }
        }
    }
}
