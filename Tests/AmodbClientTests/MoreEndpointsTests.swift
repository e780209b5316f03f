import AmodbModels
import Foundation
import Testing

@testable import AmodbClient

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Movie lists, tv, person, genres and search: what the client sends and decodes")
struct MoreEndpointsTests {
    static let moviePage = """
        {"dates": {"maximum": "2024-12-18", "minimum": "2024-11-06"}, "page": 2,
         "results": [{"id": 550, "title": "Fight Club", "poster_path": null, "release_date": ""}],
         "total_pages": 5, "total_results": 100}
        """

    @Test(arguments: MovieList.allCases)
    func aMovieListIsFetchedAndDecoded(list: MovieList) async throws {
        let stub = StubUpstream(.json(Self.moviePage))
        let page = try await stub.client().movieList(list, language: "de", page: 2)
        #expect(page.page == 2)
        #expect(page.results.map(\.id) == [550])
        #expect(page.results.first?.posterPath == nil && page.results.first?.releaseDate == nil)
        #expect(page.dates?.maximum == "2024-12-18")
        #expect(
            stub.requests.map { $0.url?.absoluteString }
                == ["http://\(stub.host)/3/movie/\(list.rawValue)?language=de&page=2"])
    }

    @Test func tvDetailsAreFetchedAndDecoded() async throws {
        let stub = StubUpstream(
            .json(#"{"id": 1396, "name": "Breaking Bad", "number_of_seasons": 5, "last_air_date": null}"#))
        let show = try await stub.client().tv(id: 1396, language: "ja-jp")
        #expect(show.name == "Breaking Bad")
        #expect(show.numberOfSeasons == 5)
        #expect(show.lastAirDate == nil)
        #expect(stub.requests.first?.url?.absoluteString == "http://\(stub.host)/3/tv/1396?language=ja-JP")
    }

    @Test func personDetailsAreFetchedAndDecoded() async throws {
        let stub = StubUpstream(.json(#"{"id": 287, "name": "Brad Pitt", "birthday": "1963-12-18", "deathday": null}"#))
        let person = try await stub.client().person(id: 287)
        #expect(person.birthday == "1963-12-18")
        #expect(person.deathday == nil)
        #expect(stub.requests.first?.url?.absoluteString == "http://\(stub.host)/3/person/287")
    }

    @Test func theMovieGenresAreFetchedAndDecoded() async throws {
        let stub = StubUpstream(.json(#"{"genres": [{"id": 28, "name": "Action"}, {"id": 18, "name": "Drama"}]}"#))
        let genres = try await stub.client().movieGenres(language: "fr-FR")
        #expect(genres.genres == [Genre(id: 28, name: "Action"), Genre(id: 18, name: "Drama")])
        #expect(stub.requests.first?.url?.absoluteString == "http://\(stub.host)/3/genre/movie/list?language=fr-FR")
    }

    @Test func aSearchSendsItsTextInCanonicalFormPercentEncoded() async throws {
        let stub = StubUpstream(.json(#"{"page": 1, "results": [], "total_pages": 1, "total_results": 0}"#))
        let page = try await stub.client().searchMovies("  Amélie   Poulain ", language: "fr-FR", page: 1)
        #expect(page == MoviePage(page: 1, results: [], totalPages: 1, totalResults: 0))
        #expect(
            stub.requests.first?.url?.absoluteString
                == "http://\(stub.host)/3/search/movie?language=fr-FR&query=am%C3%A9lie%20poulain")
    }

    @Test(
        "What amodb would refuse never reaches the network",
        arguments: ["tv id 0", "person id -1", "list page 501", "empty search", "search with a control character"])
    func invalidRequestsAreRefusedLocally(label: String) async {
        let stub = StubUpstream(.json(Self.moviePage))
        let client = stub.client()
        let error = await #expect(throws: AmodbClientError.self) {
            switch label {
            case "tv id 0": _ = try await client.tv(id: 0)
            case "person id -1": _ = try await client.person(id: -1)
            case "list page 501": _ = try await client.movieList(.popular, page: 501)
            case "empty search": _ = try await client.searchMovies("   ")
            default: _ = try await client.searchMovies("star\u{0}wars")
            }
        }
        #expect(error?.kind == .invalidRequest)
        #expect(error?.message.hasPrefix("Invalid") == true)
        #expect(stub.requests.isEmpty)
    }
}
