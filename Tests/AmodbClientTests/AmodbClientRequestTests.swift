import AmodbModels
import Foundation
import Testing

@testable import AmodbClient

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("What the client sends and decodes")
struct AmodbClientRequestTests {
    @Test func aTrendingPageIsFetchedAndDecoded() async throws {
        let stub = StubUpstream(.json(Fixtures.trendingPage))
        let page = try await stub.client().trending(.all, .week, language: "DE-de", page: 2)

        #expect(page.page == 2)
        #expect(page.results.map(\.id) == [550, 1396, 287])
        guard case .movie(let movie) = page.results[0] else {
            Issue.record("not a movie")
            return
        }
        #expect(movie.posterPath == nil)
        #expect(movie.releaseDate == nil)
        guard case .person(let person) = page.results[2] else {
            Issue.record("not a person")
            return
        }
        #expect(person.knownFor.map(\.id) == [550])

        let request = try #require(stub.requests.first)
        #expect(stub.requests.count == 1)
        #expect(request.url?.absoluteString == "http://\(stub.host)/3/trending/all/week?language=de-DE&page=2")
        #expect(request.httpMethod == "GET")
        #expect(request.value(forHTTPHeaderField: "Accept") == "application/json")
        #expect(request.timeoutInterval == 10)
    }

    @Test func theConfigurationIsFetchedWithoutParametersAndDecoded() async throws {
        let stub = StubUpstream(.json(Fixtures.configuration))
        let configuration = try await stub.client(prefix: "/x/3").configuration()

        #expect(stub.requests.count == 1)
        #expect(stub.requests.first?.url?.absoluteString == "http://\(stub.host)/x/3/configuration")
        #expect(configuration.images.secureBaseURL == "https://img.amodb.dev/t/p/")
        #expect(configuration.images.posterSizes == ["w92", "w500", "original"])
        #expect(configuration.images.logoSizes.isEmpty)
        #expect(configuration.changeKeys == ["title"])
    }

    @Test func namesAmodbDoesNotKnowAreNotSent() async throws {
        let stub = StubUpstream(.json(Fixtures.movieWithCreditsAndRatings), .json(Fixtures.movieWithCreditsAndRatings))
        _ = try await stub.client().movie(id: 550, appendToResponse: ["trailers", "credits", "casts"])
        _ = try await stub.client().movie(id: 550, appendToResponse: ["bogus"])
        #expect(
            stub.requests.map { $0.url?.absoluteString } == [
                "http://\(stub.host)/3/movie/550?append_to_response=credits", "http://\(stub.host)/3/movie/550",
            ])
    }

    @Test func pageOneIsRequestedWithoutAPageParameter() async throws {
        let stub = StubUpstream(.json(Fixtures.trendingPage))
        _ = try await stub.client().trending(.movie, .day, page: 1)
        #expect(stub.requests.first?.url?.absoluteString == "http://\(stub.host)/3/trending/movie/day")
    }

    @Test func aBaseURLWithAPathPrefixKeepsIt() async throws {
        let stub = StubUpstream(.json(Fixtures.movieWithCreditsAndRatings))
        let movie = try await stub.client(prefix: "/x/3").movie(id: 550, appendToResponse: ["ratings", "credits"])

        #expect(
            stub.requests.first?.url?.absoluteString
                == "http://\(stub.host)/x/3/movie/550?append_to_response=credits,ratings")
        #expect(movie.credits?.cast.first?.name == "Edward Norton")
        #expect(movie.credits?.crew.first?.job == "Director")
        #expect(movie.ratings?.imdb == Rating(value: 8.8, votes: 2_300_000))
        #expect(movie.ratings?.metacritic == Rating(value: 67, votes: nil))
        #expect(movie.ratings?.rottenTomatoes == nil)
    }

    @Test(
        "The base URL and the canonical path join into one URL",
        arguments: [
            ("http://h/3", "/movie/550", "http://h/3/movie/550"),
            ("http://h/3/", "/movie/550", "http://h/3/movie/550"),
            (
                "http://h/x/3", "/movie/550?append_to_response=credits,ratings",
                "http://h/x/3/movie/550?append_to_response=credits,ratings"
            ),
            ("https://api.amodb.dev/3", "/trending/all/day?page=2", "https://api.amodb.dev/3/trending/all/day?page=2"),
            ("http://127.0.0.1:8080/3", "/movie/1", "http://127.0.0.1:8080/3/movie/1"),
            ("http://127.0.0.1:8080", "/movie/1", "http://127.0.0.1:8080/movie/1"),
            ("http://h/3?region=DE", "/movie/1?language=de", "http://h/3/movie/1?language=de&region=DE"),
            ("http://h/3?region=DE", "/movie/1", "http://h/3/movie/1?region=DE"),
            ("http://h/3#top", "/movie/1", "http://h/3/movie/1"),
        ])
    func baseURLJoining(base: String, pathAndQuery: String, expected: String) throws {
        let client = AmodbClient(baseURL: try #require(URL(string: base)))
        #expect(try client.url(for: pathAndQuery).absoluteString == expected)
    }

    @Test func aBaseURLWithoutAHostIsAnInvalidRequest() throws {
        let client = AmodbClient(baseURL: URL(fileURLWithPath: "/tmp/3"))
        #expect(throws: AmodbClientError.self) { try client.url(for: "/movie/1") }
    }

    @Test func theBearerTokenIsSentInTheAuthorizationHeader() async throws {
        let stub = StubUpstream(.json(Fixtures.trendingPage))
        _ = try await stub.client(bearerToken: "s3cret-key").trending(.all, .day)
        #expect(stub.requests.first?.value(forHTTPHeaderField: "Authorization") == "Bearer s3cret-key")
    }

    @Test func noAuthorizationHeaderIsSentWithoutAToken() async throws {
        let stub = StubUpstream(.json(Fixtures.trendingPage))
        _ = try await stub.client(bearerToken: nil).trending(.all, .day)
        #expect(stub.requests.first?.value(forHTTPHeaderField: "Authorization") == nil)
    }

    @Test func theRawResponseExposesHeadersWhateverTheirCase() async throws {
        let stub = StubUpstream(
            .json(Fixtures.trendingPage, headers: ["Cache-Status": "amodb-proxy; hit; ttl=1700", "age": "42"]))
        let request = try AmodbRequest(route: .trending(.movie, .week))
        let response = try await stub.client().response(for: request)

        #expect(response.status == 200)
        #expect(response.headers["cache-status"] == "amodb-proxy; hit; ttl=1700")
        #expect(response.headers["CACHE-STATUS"] == "amodb-proxy; hit; ttl=1700")
        #expect(response.headers["Age"] == "42")
        #expect(response.headers["X-Missing"] == nil)
        #expect(try response.decode(as: TrendingPage.self).results.count == 3)
    }

    @Test func sendRawReturnsAnErrorStatusWithoutJudgingOrRetryingIt() async throws {
        let stub = StubUpstream(.error(429, "Too many requests.", headers: ["Retry-After": "5"]))
        let response = try await stub.client().sendRaw(try AmodbRequest(route: .movie(id: 550)))
        #expect(response.status == 429)
        #expect(response.headers["Retry-After"] == "5")
        #expect(response.errorBody?.statusMessage == "Too many requests.")
        #expect(stub.requests.count == 1)
        #expect(stub.requestedSleeps.isEmpty)
    }

    @Test func sendRawAcceptsAnyPath() async throws {
        let stub = StubUpstream(.error(404, "The resource you requested could not be found."))
        let response = try await stub.client().sendRaw(pathAndQuery: "/movie/abc?api_key=x")
        #expect(response.status == 404)
        #expect(stub.requests.first?.url?.absoluteString == "http://\(stub.host)/3/movie/abc?api_key=x")
    }

    @Test func sendDecodesAnyDecodableModel() async throws {
        let stub = StubUpstream(.json(Fixtures.movieWithCreditsAndRatings))
        let request = try AmodbRequest(route: .movie(id: 550), language: "fr-fr", appendToResponse: ["credits"])
        let credits = try await stub.client().send(request, as: MovieDetails.self).credits
        #expect(credits?.cast.count == 1)
        #expect(stub.requests.first?.url?.query == "append_to_response=credits&language=fr-FR")
    }

    @Test(
        "Parameters amodb would refuse never reach the network",
        arguments: [
            "trending page 0", "trending page 501", "trending language e", "trending language en_US",
            "movie id 0", "movie id -1",
        ])
    func invalidParametersAreRefusedLocally(label: String) async {
        let stub = StubUpstream(.json(Fixtures.trendingPage))
        let client = stub.client()
        let error = await #expect(throws: AmodbClientError.self) {
            switch label {
            case "trending page 0": _ = try await client.trending(.all, .day, page: 0)
            case "trending page 501": _ = try await client.trending(.all, .day, page: 501)
            case "trending language e": _ = try await client.trending(.all, .day, language: "e")
            case "trending language en_US": _ = try await client.trending(.all, .day, language: "en_US")
            case "movie id 0": _ = try await client.movie(id: 0)
            default: _ = try await client.movie(id: -1)
            }
        }
        #expect(error?.kind == .invalidRequest)
        #expect(error?.status == nil)
        #expect(error?.message.hasPrefix("Invalid") == true)
        #expect(stub.requests.isEmpty)
    }

    @Test func theClientDescribesItselfWithoutItsToken() {
        // A session of its own: dumping walks into the session, which must not be one that
        // other tests are using at the same moment (reflection of live URLSession state races).
        let client = AmodbClient(
            baseURL: URL(string: "https://api.amodb.dev/3")!, bearerToken: "s3cret-key",
            session: URLSession(configuration: .ephemeral))
        var dumped = ""
        dump(client, to: &dumped, maxDepth: 3)
        for text in [String(describing: client), String(reflecting: client), dumped] {
            #expect(!text.contains("s3cret-key"))
        }
        #expect(String(describing: client).contains("api.amodb.dev"))
    }
}
