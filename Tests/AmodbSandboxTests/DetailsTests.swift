import AmodbHTTP
import AmodbModels
import AmodbSandbox
import Foundation
import Testing

/// `/tv/{id}`, `/person/{id}` and `/genre/movie/list`.
@Suite struct DetailsTests {
    @Test func aShowHasItsDetails() async throws {
        let response = await get(AmodbSandbox(), "/3/tv/1396")
        #expect(response.status == 200)
        #expect(response.headers["Cache-Control"] == "public, max-age=3600")
        let show = try decode(TVDetails.self, response)
        #expect(show.id == 1396)
        #expect(show.name == "Breaking Bad")
        #expect(show.firstAirDate == "2008-01-20")
        #expect(show.lastAirDate == "2013-09-29")
        #expect(show.numberOfSeasons == 5 && show.numberOfEpisodes == 62)
        #expect(show.status == "Ended")
        #expect(show.genres == [Genre(id: 18, name: "Drama"), Genre(id: 80, name: "Crime")])
        #expect(show.originCountry == ["US"])
    }

    @Test func aShowsNameAndGenresAreLocalized() async throws {
        let show = try decode(TVDetails.self, await get(AmodbSandbox(), "/3/tv/1399?language=es-ES"))
        #expect(show.name == "Juego de tronos")
        #expect(show.originalName == "Game of Thrones")
        #expect(show.genres.contains(Genre(id: 18, name: "Drama")))
        let german = try decode(TVDetails.self, await get(AmodbSandbox(), "/3/tv/1396?language=de-DE"))
        #expect(german.genres == [Genre(id: 18, name: "Drama"), Genre(id: 80, name: "Krimi")])
    }

    @Test func everyTrendingShowHasDetailsThatAgreeWithItsListItem() async throws {
        let sandbox = unlimitedSandbox()
        var shows: [TVSummary] = []
        for page in 1...5 {
            for case .tv(let show) in try decode(
                TrendingPage.self, await get(sandbox, "/3/trending/tv/week?page=\(page)")
            ).results {
                shows.append(show)
            }
        }
        #expect(shows.count == 100)
        var sawUnaired = false
        for show in shows {
            let response = await get(sandbox, "/3/tv/\(show.id)")
            #expect(response.status == 200)
            let details = try decode(TVDetails.self, response)
            #expect(details.id == show.id && details.name == show.name && details.posterPath == show.posterPath)
            #expect(details.genres.map(\.id) == show.genreIds)
            if let first = details.firstAirDate, let last = details.lastAirDate {
                #expect(first <= last)
                #expect(details.numberOfSeasons >= 1 && details.numberOfEpisodes >= details.numberOfSeasons)
            } else {
                sawUnaired = true
                #expect(details.lastAirDate == nil && details.numberOfEpisodes == 0)
                #expect(response.text.contains(#""last_air_date":null"#))
            }
        }
        #expect(sawUnaired, "the catalog has shows that have not aired yet")
    }

    @Test func aPersonHasTheirDetails() async throws {
        let response = await get(AmodbSandbox(), "/3/person/287")
        #expect(response.status == 200)
        #expect(response.headers["Cache-Control"] == "public, max-age=3600")
        let person = try decode(PersonDetails.self, response)
        #expect(person.id == 287)
        #expect(person.name == "Brad Pitt")
        #expect(person.birthday == "1963-12-18")
        #expect(person.deathday == nil)
        #expect(person.placeOfBirth == "Shawnee, Oklahoma, USA")
        #expect(person.imdbId == "nm0000093")
        #expect(person.knownForDepartment == "Acting")
        #expect(person.gender == 2)
        #expect(person.biography.contains("Fight Club"))
        #expect(response.text.contains(#""deathday":null"#), "null, as amodb sends it, not left out")
        #expect(response.text.contains(#""homepage":null"#))
    }

    @Test func whatIsNotKnownOfAFamousPersonIsNull() async throws {
        let person = try decode(PersonDetails.self, await get(AmodbSandbox(), "/3/person/1283"))
        #expect(person.name == "Helena Bonham Carter")
        #expect(person.gender == 1)
        #expect(person.birthday == nil && person.placeOfBirth == nil && person.imdbId == nil)
        let died = try decode(PersonDetails.self, await get(AmodbSandbox(), "/3/person/1810"))
        #expect(died.deathday == "2008-01-22")
        let director = try decode(PersonDetails.self, await get(AmodbSandbox(), "/3/person/608"))
        #expect(director.alsoKnownAs.contains("宮崎駿"))
        #expect(director.knownForDepartment == "Directing")
    }

    @Test func everyTrendingPersonHasDetails() async throws {
        let sandbox = unlimitedSandbox()
        var ids: [Int] = []
        for page in 1...5 {
            for case .person(let person) in try decode(
                TrendingPage.self, await get(sandbox, "/3/trending/person/week?page=\(page)")
            ).results {
                ids.append(person.id)
            }
        }
        #expect(!ids.isEmpty)
        for id in ids {
            let details = try decode(PersonDetails.self, await get(sandbox, "/3/person/\(id)"))
            #expect(details.id == id)
            #expect(!details.biography.isEmpty, "everyone trending is known for something")
            if let birthday = details.birthday, let deathday = details.deathday { #expect(birthday < deathday) }
        }
    }

    @Test func personDetailsAreTheSameInEveryLanguage() async {
        let sandbox = AmodbSandbox()
        let english = await get(sandbox, "/3/person/525")
        #expect(english.status == 200)
        #expect(await get(sandbox, "/3/person/525?language=ja-JP").body == english.body)
    }

    @Test(arguments: ["/3/tv/999999", "/3/tv/550", "/3/person/999999", "/3/person/1396"])
    func anIdTheCatalogLacksIsAmodbsNotFound(target: String) async throws {
        let response = await get(AmodbSandbox(), target)
        #expect(response.status == 404)
        #expect(
            try decode(AmodbErrorBody.self, response)
                == AmodbErrorBody(statusCode: 34, statusMessage: "The resource you requested could not be found."))
        #expect(response.headers["Cache-Control"] == "no-store")
    }

    @Test func theMovieGenresAreNamed() async throws {
        let response = await get(AmodbSandbox(), "/3/genre/movie/list")
        #expect(response.status == 200)
        #expect(response.headers["Cache-Control"] == "public, max-age=86400")
        let list = try decode(GenreList.self, response)
        #expect(list.genres.count == 19)
        #expect(list.genres.first == Genre(id: 28, name: "Action"))
        #expect(list.genres.contains(Genre(id: 878, name: "Science Fiction")))
        #expect(Set(list.genres.map(\.id)).count == 19)
    }

    @Test(arguments: [
        ("de-DE", Genre(id: 35, name: "Komödie")), ("de", Genre(id: 35, name: "Komödie")),
        ("fr-FR", Genre(id: 18, name: "Drame")), ("ja-JP", Genre(id: 27, name: "ホラー")),
        ("sv-SE", Genre(id: 35, name: "Comedy")), ("xx", Genre(id: 35, name: "Comedy")),
    ])
    func theMovieGenresAreNamedInTheRequestsLanguage(language: String, genre: Genre) async throws {
        let list = try decode(GenreList.self, await get(AmodbSandbox(), "/3/genre/movie/list?language=\(language)"))
        #expect(list.genres.contains(genre))
        #expect(list.genres.count == 19)
    }
}
