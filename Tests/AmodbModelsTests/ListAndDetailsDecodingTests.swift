import AmodbModels
import Foundation
import Testing

@Suite("Decoding movie lists, searches, tv and person details and genres")
struct ListAndDetailsDecodingTests {
    /// `/movie/now_playing` as TMDB sends it: a `dates` window, items with the usual gaps.
    static let nowPlaying = """
        {
          "dates": {"maximum": "2024-12-18", "minimum": "2024-11-06"},
          "page": 1,
          "results": [
            {
              "adult": false, "backdrop_path": "/3V4kLQg0kSqPLctI5ziYWabAZYF.jpg", "genre_ids": [878, 28, 12],
              "id": 912649, "original_language": "en", "original_title": "Venom: The Last Dance",
              "overview": "Eddie and Venom are on the run.", "popularity": 2813.584,
              "poster_path": "/aosm8NMQ3UyoBVpSxyimorCQykC.jpg", "release_date": "2024-10-22",
              "title": "Venom: The Last Dance", "video": false, "vote_average": 6.5, "vote_count": 1047
            },
            {
              "adult": false, "backdrop_path": null, "genre_ids": [], "id": 1241982,
              "original_language": "fr", "original_title": "La Nuit", "overview": "", "popularity": 12.1,
              "poster_path": null, "release_date": "", "title": "The Night", "video": false,
              "vote_average": 0.0, "vote_count": 0
            }
          ],
          "total_pages": 196,
          "total_results": 3901
        }
        """

    @Test func aNowPlayingPageCarriesItsDatesAndItsMovies() throws {
        let page = try Fixtures.decode(MoviePage.self, Self.nowPlaying)
        #expect(page.page == 1)
        #expect(page.totalPages == 196)
        #expect(page.totalResults == 3901)
        #expect(page.dates == MoviePage.DateRange(maximum: "2024-12-18", minimum: "2024-11-06"))
        #expect(page.results.map(\.id) == [912649, 1_241_982])
        #expect(page.results[0].title == "Venom: The Last Dance")
        #expect(page.results[0].genreIds == [878, 28, 12])
        let sparse = page.results[1]
        #expect(sparse.posterPath == nil && sparse.backdropPath == nil && sparse.releaseDate == nil)
        #expect(sparse.voteAverage == 0 && sparse.voteCount == 0)
        #expect(sparse.originalTitle == "La Nuit")
    }

    @Test(
        "A list without dates, or with dates null, has none",
        arguments: [
            #"{"page": 2, "results": [], "total_pages": 500, "total_results": 10000}"#,
            #"{"dates": null, "page": 2, "results": [], "total_pages": 500, "total_results": 10000}"#,
        ])
    func aListWithoutDatesHasNone(json: String) throws {
        let page = try Fixtures.decode(MoviePage.self, json)
        #expect(page.dates == nil)
        #expect(page.page == 2 && page.results.isEmpty && page.totalPages == 500 && page.totalResults == 10000)
    }

    @Test func aSearchWithoutMatchesIsOnePageOfNothing() throws {
        let page = try Fixtures.decode(
            MoviePage.self, #"{"page": 1, "results": [], "total_pages": 1, "total_results": 0}"#)
        #expect(page == MoviePage(page: 1, results: [], totalPages: 1, totalResults: 0))
    }

    @Test func aPageWithoutTotalsFallsBackToItsOwnCounts() throws {
        let page = try Fixtures.decode(MoviePage.self, #"{"page": 3, "results": [\#(Fixtures.movieItem)]}"#)
        #expect(page.totalPages == 3)
        #expect(page.totalResults == 1)
    }

    @Test(
        "A page without its page number or results, or with a broken item, is refused",
        arguments: [
            #"{"results": [], "total_pages": 1, "total_results": 0}"#,
            #"{"page": 1, "total_pages": 1, "total_results": 0}"#,
            #"{"page": 1, "results": [{"title": "no id"}]}"#,
            #"{"page": 1, "results": [], "dates": {"maximum": "2024-12-18"}}"#,
        ])
    func anIncompletePageIsRefused(json: String) {
        #expect(throws: DecodingError.self) { try Fixtures.decode(MoviePage.self, json) }
    }

    /// `/tv/1399` as TMDB sends it, with the members the model leaves out.
    static let gameOfThrones = """
        {
          "adult": false, "backdrop_path": "/2OMB0ynKlyIenMJWI2Dy9IWT4c.jpg",
          "created_by": [{"id": 9813, "name": "David Benioff", "gender": 2, "profile_path": "/xvNN5huL0X8yJ7h3IZfGG4O2zBD.jpg"}],
          "episode_run_time": [], "first_air_date": "2011-04-17",
          "genres": [{"id": 10765, "name": "Sci-Fi & Fantasy"}, {"id": 18, "name": "Drama"},
                     {"id": 10759, "name": "Action & Adventure"}],
          "homepage": "http://www.hbo.com/game-of-thrones", "id": 1399, "in_production": false,
          "languages": ["en"], "last_air_date": "2019-05-19",
          "last_episode_to_air": {"id": 1551830, "name": "The Iron Throne", "air_date": "2019-05-19"},
          "name": "Game of Thrones", "next_episode_to_air": null,
          "networks": [{"id": 49, "logo_path": "/tuomPhY2UtuPTqqFnKMVHvSb724.png", "name": "HBO"}],
          "number_of_episodes": 73, "number_of_seasons": 8, "origin_country": ["US"],
          "original_language": "en", "original_name": "Game of Thrones",
          "overview": "Seven noble families fight for control of the mythical land of Westeros.",
          "popularity": 1083.917, "poster_path": "/1XS1oqL89opfnbLl8WnZY1O1uJx.jpg",
          "seasons": [{"air_date": "2011-04-17", "episode_count": 10, "id": 3624, "season_number": 1}],
          "status": "Ended", "tagline": "Winter is coming.", "type": "Scripted",
          "vote_average": 8.442, "vote_count": 24032
        }
        """

    @Test func tvDetailsDecodeEveryField() throws {
        let show = try Fixtures.decode(TVDetails.self, Self.gameOfThrones)
        #expect(
            show
                == TVDetails(
                    id: 1399, name: "Game of Thrones", originalName: "Game of Thrones",
                    overview: "Seven noble families fight for control of the mythical land of Westeros.",
                    firstAirDate: "2011-04-17", lastAirDate: "2019-05-19", numberOfSeasons: 8, numberOfEpisodes: 73,
                    genres: [
                        Genre(id: 10765, name: "Sci-Fi & Fantasy"), Genre(id: 18, name: "Drama"),
                        Genre(id: 10759, name: "Action & Adventure"),
                    ],
                    posterPath: "/1XS1oqL89opfnbLl8WnZY1O1uJx.jpg", backdropPath: "/2OMB0ynKlyIenMJWI2Dy9IWT4c.jpg",
                    voteAverage: 8.442, voteCount: 24032, popularity: 1083.917, status: "Ended",
                    originalLanguage: "en", originCountry: ["US"]))
    }

    @Test func aShowNotYetAiredHasNullsAndZeros() throws {
        let show = try Fixtures.decode(
            TVDetails.self,
            """
            {
              "backdrop_path": null, "first_air_date": null, "genres": [], "id": 250307,
              "last_air_date": null, "name": "Untitled Project", "number_of_episodes": 0,
              "number_of_seasons": 0, "origin_country": [], "original_language": "en",
              "original_name": "Untitled Project", "overview": "", "popularity": 1.4,
              "poster_path": null, "status": "In Production", "vote_average": 0.0, "vote_count": 0
            }
            """)
        #expect(show.firstAirDate == nil && show.lastAirDate == nil)
        #expect(show.posterPath == nil && show.backdropPath == nil)
        #expect(show.numberOfSeasons == 0 && show.numberOfEpisodes == 0)
        #expect(show.status == "In Production")
        #expect(show.voteAverage == 0)
    }

    @Test func tvDetailsAmodbLeavesOutTakeTheirDefaults() throws {
        let show = try Fixtures.decode(TVDetails.self, #"{"id": 1396, "name": "Breaking Bad", "first_air_date": ""}"#)
        #expect(show.originalName == "Breaking Bad")
        #expect(show.overview == "")
        #expect(show.firstAirDate == nil)
        #expect(show.genres.isEmpty && show.originCountry.isEmpty)
        #expect(show.numberOfSeasons == 0 && show.status == nil)
    }

    /// `/person/287` as TMDB sends it.
    static let bradPitt = """
        {
          "adult": false,
          "also_known_as": ["William Bradley Pitt", "Брэд Питт", "ブラッド・ピット", "브래드 피트"],
          "biography": "William Bradley Pitt is an American actor and film producer.",
          "birthday": "1963-12-18", "deathday": null, "gender": 2, "homepage": null, "id": 287,
          "imdb_id": "nm0000093", "known_for_department": "Acting", "name": "Brad Pitt",
          "place_of_birth": "Shawnee, Oklahoma, USA", "popularity": 10.647,
          "profile_path": "/cckcYc2v0yh1tc9QjRelptcOBko.jpg"
        }
        """

    @Test func personDetailsDecodeEveryField() throws {
        let person = try Fixtures.decode(PersonDetails.self, Self.bradPitt)
        #expect(
            person
                == PersonDetails(
                    id: 287, name: "Brad Pitt",
                    biography: "William Bradley Pitt is an American actor and film producer.",
                    birthday: "1963-12-18", deathday: nil, placeOfBirth: "Shawnee, Oklahoma, USA",
                    knownForDepartment: "Acting", profilePath: "/cckcYc2v0yh1tc9QjRelptcOBko.jpg", popularity: 10.647,
                    alsoKnownAs: ["William Bradley Pitt", "Брэд Питт", "ブラッド・ピット", "브래드 피트"], gender: 2,
                    imdbId: "nm0000093", homepage: nil))
    }

    @Test func aPersonAmodbKnowsLittleOfHasNulls() throws {
        let person = try Fixtures.decode(
            PersonDetails.self,
            """
            {
              "adult": false, "also_known_as": [], "biography": "", "birthday": null, "deathday": null,
              "gender": 0, "homepage": null, "id": 3100053, "imdb_id": null, "known_for_department": null,
              "name": "Iris Moreau", "place_of_birth": null, "popularity": 0.6, "profile_path": null
            }
            """)
        #expect(person.biography == "")
        #expect(person.birthday == nil && person.deathday == nil && person.placeOfBirth == nil)
        #expect(person.knownForDepartment == nil && person.imdbId == nil && person.homepage == nil)
        #expect(person.profilePath == nil && person.alsoKnownAs.isEmpty && person.gender == 0)
    }

    @Test func aPersonWhoDiedHasADeathday() throws {
        let person = try Fixtures.decode(
            PersonDetails.self,
            #"{"id": 1810, "name": "Heath Ledger", "birthday": "1979-04-04", "deathday": "2008-01-22", "biography": null}"#
        )
        #expect(person.deathday == "2008-01-22")
        #expect(person.biography == "")
        #expect(person.popularity == 0 && person.gender == 0)
    }

    @Test(
        "Details without id or name are refused",
        arguments: [#"{"name": "Brad Pitt"}"#, #"{"id": 287}"#, #"{"id": "287", "name": "Brad Pitt"}"#])
    func detailsWithoutIdOrNameAreRefused(json: String) {
        #expect(throws: DecodingError.self) { try Fixtures.decode(PersonDetails.self, json) }
        #expect(throws: DecodingError.self) {
            try Fixtures.decode(TVDetails.self, json.replacingOccurrences(of: "Brad Pitt", with: "Arcane"))
        }
    }

    @Test func theGenreListDecodesInItsOrder() throws {
        let list = try Fixtures.decode(
            GenreList.self,
            #"{"genres": [{"id": 28, "name": "Action"}, {"id": 12, "name": "Abenteuer"}, {"id": 16, "name": "Animation"}]}"#
        )
        #expect(
            list.genres == [
                Genre(id: 28, name: "Action"), Genre(id: 12, name: "Abenteuer"), Genre(id: 16, name: "Animation"),
            ])
    }

    @Test(arguments: [#"{}"#, #"{"genres": null}"#, #"{"genres": [{"id": 28}]}"#])
    func aGenreListWithoutGenresIsRefused(json: String) {
        #expect(throws: DecodingError.self) { try Fixtures.decode(GenreList.self, json) }
    }

    @Test func theNewModelsSurviveARoundTrip() throws {
        let page = try Fixtures.decode(MoviePage.self, Self.nowPlaying)
        #expect(try RoundTripTests.roundTrip(page) == page)
        let show = try Fixtures.decode(TVDetails.self, Self.gameOfThrones)
        #expect(try RoundTripTests.roundTrip(show) == show)
        let person = try Fixtures.decode(PersonDetails.self, Self.bradPitt)
        #expect(try RoundTripTests.roundTrip(person) == person)
        let genres = GenreList(genres: [Genre(id: 18, name: "Drama")])
        #expect(try RoundTripTests.roundTrip(genres) == genres)
    }

    @Test func aPageWithoutDatesEncodesWithoutThem() throws {
        let json = String(
            decoding: try JSONEncoder().encode(MoviePage(page: 1, results: [], totalPages: 1, totalResults: 0)),
            as: UTF8.self)
        #expect(!json.contains("dates"))
        #expect(json.contains(#""total_pages":1"#) && json.contains(#""total_results":0"#))
    }
}
