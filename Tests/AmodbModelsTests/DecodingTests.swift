import AmodbModels
import Foundation
import Testing

@Suite("Decoding amodb's JSON")
struct DecodingTests {
    /// A minimal movie item with `fields` (a JSON fragment ending in a comma) spliced in.
    static func movieItem(_ fields: String) -> String {
        #"{"id": 550, "title": "Fight Club", \#(fields) "media_type": "movie"}"#
    }

    @Test(
        "poster_path may be null, missing or empty",
        arguments: [
            (#""poster_path": null,"#, nil),
            ("", nil),
            (#""poster_path": "","#, nil),
            (#""poster_path": "/p.jpg","#, "/p.jpg"),
        ] as [(String, String?)])
    func posterPathMayBeAbsent(fields: String, expected: String?) throws {
        let movie = try Fixtures.decode(MovieSummary.self, Self.movieItem(fields))
        #expect(movie.posterPath == expected)
    }

    @Test(
        "release_date may be missing, empty or null",
        arguments: [
            ("", nil),
            (#""release_date": "","#, nil),
            (#""release_date": null,"#, nil),
            (#""release_date": "1999-10-15","#, "1999-10-15"),
        ] as [(String, String?)])
    func releaseDateMayBeAbsent(fields: String, expected: String?) throws {
        let movie = try Fixtures.decode(MovieSummary.self, Self.movieItem(fields))
        #expect(movie.releaseDate == expected)
    }

    @Test func aFullMovieItemDecodesEveryField() throws {
        let movie = try Fixtures.decode(MovieSummary.self, Fixtures.movieItem)
        #expect(
            movie
                == MovieSummary(
                    id: 550, title: "Fight Club", originalTitle: "Fight Club", overview: "An insomniac…",
                    releaseDate: "1999-10-15", posterPath: "/p.jpg", backdropPath: "/bd.jpg", voteAverage: 8.4,
                    voteCount: 27000, popularity: 61.4, genreIds: [18, 53], adult: false, originalLanguage: "en",
                    video: false))
    }

    @Test(
        "Unknown fields are ignored",
        arguments: [
            #""belongs_to_collection": {"id": 1, "name": "x"},"#,
            #""new_field": [1, 2, 3], "flag": true,"#,
            #""known_for": "not what a movie has", "name": 42,"#,
        ])
    func unknownFieldsAreIgnored(fields: String) throws {
        let movie = try Fixtures.decode(MovieSummary.self, Self.movieItem(fields))
        #expect(movie.id == 550)
    }

    @Test func aTitleWithNoVotesHasAverageZero() throws {
        let movie = try Fixtures.decode(MovieSummary.self, Self.movieItem(#""vote_average": 0.0, "vote_count": 0,"#))
        #expect(movie.voteAverage == 0.0)
        #expect(movie.voteCount == 0)
    }

    @Test func fieldsAmodbLeavesOutTakeTheirDefaults() throws {
        let movie = try Fixtures.decode(MovieSummary.self, Self.movieItem(""))
        #expect(movie.genreIds == [])
        #expect(movie.adult == false)
        #expect(movie.video == false)
        #expect(movie.originalTitle == movie.title)
        #expect(movie.overview == "")
        #expect(movie.voteAverage == 0)
    }

    @Test(
        "A movie item without id or title is rejected",
        arguments: [
            #"{"title": "Fight Club", "media_type": "movie"}"#,
            #"{"id": 550, "media_type": "movie"}"#,
            #"{"id": "550", "title": "Fight Club", "media_type": "movie"}"#,
        ])
    func aMovieItemWithoutIdOrTitleIsRejected(json: String) {
        #expect(throws: DecodingError.self) { try Fixtures.decode(MovieSummary.self, json) }
    }

    @Test func aTrendingPageHoldsMoviesShowsAndPeople() throws {
        let page = try Fixtures.decode(TrendingPage.self, Fixtures.trendingPage)
        #expect(page.page == 1)
        #expect(page.totalPages == 500)
        #expect(page.totalResults == 10000)
        #expect(page.results.map(\.id) == [550, 1396, 287])
        #expect(page.results.map(\.displayName) == ["Fight Club", "Breaking Bad", "Brad Pitt"])

        guard case .tv(let show) = page.results[1] else {
            Issue.record("not a show")
            return
        }
        #expect(show.firstAirDate == "2008-01-20")
        #expect(show.backdropPath == nil)
        #expect(show.originCountry == ["US"])

        guard case .person(let person) = page.results[2] else {
            Issue.record("not a person")
            return
        }
        #expect(person.profilePath == nil)
        #expect(person.knownForDepartment == "Acting")
        #expect(person.knownFor.map(\.id) == [550, 1396])
        guard case .movie = person.knownFor[0], case .tv = person.knownFor[1] else {
            Issue.record("known_for kinds were lost")
            return
        }
    }

    @Test func aTrendingPageWithoutTotalsFallsBackToItsOwnCounts() throws {
        let page = try Fixtures.decode(TrendingPage.self, #"{"page": 3, "results": [\#(Fixtures.movieItem)]}"#)
        #expect(page.totalPages == 3)
        #expect(page.totalResults == 1)
    }

    @Test func anItemOfUnknownMediaTypeIsSkippedNotFatalToThePage() throws {
        let json =
            #"{"page": 1, "results": [{"id": 1, "name": "x", "media_type": "collection"}, \#(Fixtures.movieItem)]}"#
        let page = try Fixtures.decode(TrendingPage.self, json)
        #expect(page.results.count == 1)
        #expect(page.results.first?.id == 550)
    }

    @Test func aSingleItemOfUnknownMediaTypeIsAnErrorWhenDecodedAlone() throws {
        let json = #"{"id": 1, "name": "x", "media_type": "collection"}"#
        #expect(throws: DecodingError.self) { try Fixtures.decode(TrendingItem.self, json) }
    }

    @Test func aKnownItemThatIsMalformedStillFailsThePage() throws {
        let json = #"{"page": 1, "results": [{"id": 1, "media_type": "movie"}]}"#
        #expect(throws: DecodingError.self) { try Fixtures.decode(TrendingPage.self, json) }
    }

    @Test func movieDetailsCarryCreditsAndRatings() throws {
        let movie = try Fixtures.decode(MovieDetails.self, Fixtures.movieDetails)
        #expect(movie.id == 550)
        #expect(movie.posterPath == nil)
        #expect(movie.releaseDate == nil)
        #expect(movie.runtime == 139)
        #expect(movie.genres == [Genre(id: 18, name: "Drama")])
        #expect(movie.imdbId == "tt0137523")
        #expect(movie.tagline == "Mischief. Mayhem. Soap.")
        #expect(
            movie.credits?.cast == [
                CastMember(id: 819, name: "Edward Norton", character: "The Narrator", profilePath: "/en.jpg", order: 0)
            ])
        #expect(
            movie.credits?.crew == [
                CrewMember(id: 7467, name: "David Fincher", department: "Directing", job: "Director", profilePath: nil)
            ])
        #expect(
            movie.ratings
                == Ratings(
                    imdb: Rating(value: 8.8, votes: 2_300_000), kinopoisk: nil,
                    metacritic: Rating(value: 67, votes: nil), rottenTomatoes: Rating(value: 79, votes: nil),
                    tmdb: Rating(value: 8.4, votes: 27000)))
    }

    @Test func movieDetailsWithoutAppendedResourcesHaveNoCreditsOrRatings() throws {
        let json = #"{"id": 550, "title": "Fight Club", "runtime": null, "tagline": ""}"#
        let movie = try Fixtures.decode(MovieDetails.self, json)
        #expect(movie.credits == nil)
        #expect(movie.ratings == nil)
        #expect(movie.runtime == nil)
        #expect(movie.tagline == nil)
        #expect(movie.budget == 0)
        #expect(movie.genres == [])
    }

    @Test(
        "Each ratings source is null, missing or a value with optional votes",
        arguments: [
            (#"null"#, nil),
            (#"{"value": 8.8, "votes": 2300000}"#, Rating(value: 8.8, votes: 2_300_000)),
            (#"{"value": 79, "votes": null}"#, Rating(value: 79, votes: nil)),
            (#"{"value": 7.5}"#, Rating(value: 7.5, votes: nil)),
            (#"{"value": 0, "votes": 0}"#, Rating(value: 0, votes: 0)),
            (#"{"value": 6.1, "votes": 12, "source_url": "https://example.org"}"#, Rating(value: 6.1, votes: 12)),
        ] as [(String, Rating?)])
    func ratingsSourcesDecode(source: String, expected: Rating?) throws {
        for key in ["imdb", "kinopoisk", "metacritic", "rotten_tomatoes", "tmdb"] {
            let ratings = try Fixtures.decode(Ratings.self, #"{"\#(key)": \#(source)}"#)
            let all = [ratings.imdb, ratings.kinopoisk, ratings.metacritic, ratings.rottenTomatoes, ratings.tmdb]
            #expect(all.compactMap { $0 } == [expected].compactMap { $0 }, "key \(key)")
        }
    }

    @Test func anEmptyRatingsObjectHasNoSources() throws {
        #expect(try Fixtures.decode(Ratings.self, "{}") == Ratings())
    }

    @Test(
        "A rating without a numeric value is rejected",
        arguments: [
            #"{"imdb": {"votes": 3}}"#, #"{"imdb": {"value": "8.8"}}"#, #"{"imdb": {"value": null}}"#,
        ])
    func ratingWithoutValueIsRejected(json: String) {
        #expect(throws: DecodingError.self) { try Fixtures.decode(Ratings.self, json) }
    }

    @Test func anErrorBodyDecodes() throws {
        let body = try Fixtures.decode(AmodbErrorBody.self, Fixtures.errorBody)
        #expect(
            body == AmodbErrorBody(statusCode: 7, statusMessage: "Invalid API key: You must be granted a valid key."))
        #expect(body.success == false)
    }

    @Test func anErrorBodyToleratesMissingSuccessAndCode() throws {
        let body = try Fixtures.decode(AmodbErrorBody.self, #"{"status_message": "Internal error."}"#)
        #expect(body == AmodbErrorBody(statusCode: 0, statusMessage: "Internal error."))
    }

    @Test func anErrorBodyWithoutMessageIsRejected() {
        #expect(throws: DecodingError.self) {
            try Fixtures.decode(AmodbErrorBody.self, #"{"success": false, "status_code": 34}"#)
        }
    }
}
