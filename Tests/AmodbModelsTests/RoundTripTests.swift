import AmodbModels
import Foundation
import Testing

@Suite("Encoding and decoding back")
struct RoundTripTests {
    static func roundTrip<T: Codable>(_ value: T) throws -> T {
        try JSONDecoder().decode(T.self, from: JSONEncoder().encode(value))
    }

    @Test func aTrendingPageSurvivesARoundTrip() throws {
        let page = try Fixtures.decode(TrendingPage.self, Fixtures.trendingPage)
        #expect(try Self.roundTrip(page) == page)
    }

    @Test func encodedTrendingItemsKeepTheirMediaType() throws {
        let page = try Fixtures.decode(TrendingPage.self, Fixtures.trendingPage)
        let object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(page)) as? [String: Any]
        let results = try #require(object?["results"] as? [[String: Any]])
        #expect(results.compactMap { $0["media_type"] as? String } == ["movie", "tv", "person"])
        #expect(results[0]["release_date"] as? String == "1999-10-15")
        #expect(results[2]["known_for"] is [Any])
    }

    @Test func movieDetailsWithCreditsAndRatingsSurviveARoundTrip() throws {
        let movie = try Fixtures.decode(MovieDetails.self, Fixtures.movieDetails)
        #expect(try Self.roundTrip(movie) == movie)
    }

    @Test func valuesBuiltInCodeSurviveARoundTrip() throws {
        let movie = MovieSummary(
            id: 1, title: "T", originalTitle: "O", overview: "", releaseDate: nil, posterPath: nil,
            backdropPath: nil, voteAverage: 0, voteCount: 0, popularity: 0, genreIds: [], originalLanguage: "fr")
        let person = PersonSummary(
            id: 2, name: "P", profilePath: "/p.jpg", knownForDepartment: nil, popularity: 1, knownFor: [.movie(movie)])
        let page = TrendingPage(page: 2, results: [.movie(movie), .person(person)], totalPages: 9, totalResults: 170)
        #expect(try Self.roundTrip(page) == page)
        #expect(
            try Self.roundTrip(Ratings(imdb: Rating(value: 7, votes: nil)))
                == Ratings(imdb: Rating(value: 7, votes: nil)))
        #expect(
            try Self.roundTrip(AmodbErrorBody(statusCode: 1001, statusMessage: "m"))
                == AmodbErrorBody(statusCode: 1001, statusMessage: "m"))
    }

    @Test func anErrorBodyEncodesWithAmodbKeys() throws {
        let data = try JSONEncoder().encode(AmodbErrorBody(statusCode: 7, statusMessage: "Invalid API key"))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["success"] as? Bool == false)
        #expect(object["status_code"] as? Int == 7)
        #expect(object["status_message"] as? String == "Invalid API key")
    }
}
