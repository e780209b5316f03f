import AmodbHTTP
import AmodbModels
import AmodbSandbox
import Foundation
import Testing

@Suite struct MovieListTests {
    /// Every page of a list, in order.
    static func wholeList(_ list: MovieList, language: String? = nil, from sandbox: AmodbSandbox) async throws
        -> [MovieSummary]
    {
        var movies: [MovieSummary] = []
        for page in 1...5 {
            let suffix = language.map { "&language=\($0)" } ?? ""
            movies += try decode(
                MoviePage.self, await get(sandbox, "/3/movie/\(list.rawValue)?page=\(page)\(suffix)")
            ).results
        }
        return movies
    }

    @Test(arguments: MovieList.allCases)
    func listsHoldTwentyMoviesForFivePages(list: MovieList) async throws {
        let sandbox = unlimitedSandbox()
        var ids = Set<Int>()
        for page in 1...5 {
            let response = await get(sandbox, "/3/movie/\(list.rawValue)?page=\(page)")
            #expect(response.status == 200)
            #expect(response.headers["Cache-Control"] == "public, max-age=1800")
            let answer = try decode(MoviePage.self, response)
            #expect(answer.page == page)
            #expect(answer.results.count == 20)
            #expect(answer.totalPages == 5)
            #expect(answer.totalResults == 100)
            ids.formUnion(answer.results.map(\.id))
        }
        #expect(ids.count == 100)
        #expect(Set(sandbox.movieIDs) == ids, "every movie of the catalog, each once")
    }

    @Test(arguments: MovieList.allCases)
    func aPagePastTheLastIsEmptyWithTheListsTotals(list: MovieList) async throws {
        let response = await get(AmodbSandbox(), "/3/movie/\(list.rawValue)?page=6")
        #expect(response.status == 200)
        let answer = try decode(MoviePage.self, response)
        #expect(answer.page == 6)
        #expect(answer.results.isEmpty)
        #expect(answer.totalPages == 5)
        #expect(answer.totalResults == 100)
    }

    @Test func popularIsMostPopularFirst() async throws {
        let movies = try await Self.wholeList(.popular, from: unlimitedSandbox())
        #expect(movies.count == 100)
        for (earlier, later) in zip(movies, movies.dropFirst()) {
            #expect(earlier.popularity >= later.popularity, "\(earlier.title) before \(later.title)")
        }
    }

    @Test func topRatedIsBestAverageFirstThenMostVotes() async throws {
        let movies = try await Self.wholeList(.topRated, from: unlimitedSandbox())
        #expect(movies.count == 100)
        for (earlier, later) in zip(movies, movies.dropFirst()) {
            #expect(
                earlier.voteAverage > later.voteAverage
                    || (earlier.voteAverage == later.voteAverage && earlier.voteCount >= later.voteCount),
                "\(earlier.title) before \(later.title)")
        }
        #expect(movies.first?.id == 278, "The Shawshank Redemption has the catalog's best average")
    }

    @Test func nowPlayingIsLatestReleaseFirstWithinItsDates() async throws {
        let sandbox = unlimitedSandbox()
        let first = try decode(MoviePage.self, await get(sandbox, "/3/movie/now_playing"))
        let dates = try #require(first.dates)
        #expect(dates.minimum <= dates.maximum)
        #expect(first.results.first?.releaseDate == dates.maximum)
        let released = first.results.compactMap(\.releaseDate)
        #expect(released.count == 20)
        #expect(released == released.sorted(by: >))
        #expect(released.allSatisfy { (dates.minimum...dates.maximum).contains($0) })
    }

    @Test func upcomingIsSoonestFirstWithinItsDates() async throws {
        let first = try decode(MoviePage.self, await get(AmodbSandbox(), "/3/movie/upcoming"))
        let dates = try #require(first.dates)
        #expect(dates.minimum <= dates.maximum)
        #expect(first.results.first?.releaseDate == dates.minimum)
        let dated = first.results.prefix { $0.releaseDate != nil }.compactMap(\.releaseDate)
        #expect(!dated.isEmpty)
        #expect(dated == dated.sorted())
        #expect(first.results.prefix(dated.count).allSatisfy { $0.voteCount == 0 }, "nobody has seen them yet")
    }

    @Test(arguments: [MovieList.popular, .topRated])
    func onlyNowPlayingAndUpcomingCarryDates(list: MovieList) async throws {
        let response = await get(AmodbSandbox(), "/3/movie/\(list.rawValue)")
        #expect(try decode(MoviePage.self, response).dates == nil)
        #expect(!response.text.contains(#""dates""#), "left out, not null, as amodb sends it")
        #expect(response.text.contains(#""poster_path":"#))
    }

    @Test func listsAreLocalizedInTheSameOrder() async throws {
        let sandbox = unlimitedSandbox()
        let english = try await Self.wholeList(.popular, from: sandbox)
        let spanish = try await Self.wholeList(.popular, language: "es-ES", from: sandbox)
        #expect(english.map(\.id) == spanish.map(\.id))
        #expect(english.first { $0.id == 550 }?.title == "Fight Club")
        #expect(spanish.first { $0.id == 550 }?.title == "El club de la lucha")
        #expect(spanish.first { $0.id == 550 }?.originalTitle == "Fight Club")
        let dutch = try await Self.wholeList(.popular, language: "nl-NL", from: sandbox)
        #expect(dutch == english, "a language without translations reads as English")
    }

    @Test func everyListedMovieHasDetails() async throws {
        let sandbox = unlimitedSandbox()
        for movie in try await Self.wholeList(.topRated, from: sandbox) {
            let details = try decode(MovieDetails.self, await get(sandbox, "/3/movie/\(movie.id)"))
            #expect(details.id == movie.id && details.title == movie.title)
        }
    }

    @Test func listPagesAreDeterministicAndPageOneIsNoPage() async {
        let first = await get(AmodbSandbox(), "/3/movie/upcoming?page=2&language=ja-JP")
        let second = await get(AmodbSandbox(), "/3/movie/upcoming?language=ja&page=2")
        #expect(first.status == 200 && !first.body.isEmpty)
        #expect(first.body == second.body)
        #expect(
            await get(AmodbSandbox(), "/3/movie/popular").body == get(AmodbSandbox(), "/3/movie/popular?page=1").body)
    }

    @Test(arguments: ["0", "501", "two"])
    func aPageOutsideOneTo500IsRefused(page: String) async throws {
        let response = await get(AmodbSandbox(), "/3/movie/top_rated?page=\(page)")
        #expect(response.status == 400)
        #expect(try decode(AmodbErrorBody.self, response).statusCode == 22)
    }
}
