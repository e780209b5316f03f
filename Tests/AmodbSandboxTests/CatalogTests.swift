import AmodbHTTP
import AmodbModels
import AmodbProxy
import AmodbSandbox
import Foundation
import Testing

@Suite struct CatalogTests {
    @Test(arguments: MediaType.allCases, TimeWindow.allCases)
    func trendingPagesHoldTwentyItemsForFivePages(media: MediaType, window: TimeWindow) async throws {
        let sandbox = unlimitedSandbox()
        var ids = Set<String>()
        for page in 1...5 {
            let response = await get(sandbox, "/3/trending/\(media.rawValue)/\(window.rawValue)?page=\(page)")
            #expect(response.status == 200)
            let list = try decode(TrendingPage.self, response)
            #expect(list.page == page)
            #expect(list.results.count == 20)
            #expect(list.totalPages == 5)
            #expect(list.totalResults == 100)
            for item in list.results { ids.insert(itemKey(item)) }
        }
        #expect(ids.count == 100)
    }

    @Test func pagePastTheLastIsEmpty() async throws {
        let list = try decode(TrendingPage.self, await get(AmodbSandbox(), "/3/trending/tv/day?page=6"))
        #expect(list.page == 6)
        #expect(list.results.isEmpty)
        #expect(list.totalPages == 5)
    }

    @Test func noPageMeansPageOne() async throws {
        let sandbox = AmodbSandbox()
        let implicit = await get(sandbox, "/3/trending/movie/week")
        let explicit = await get(sandbox, "/3/trending/movie/week?page=1")
        #expect(try decode(TrendingPage.self, implicit).page == 1)
        #expect(implicit.body == explicit.body)
    }

    @Test(arguments: ["0", "501", "-1", "two", "1.5"])
    func pageOutsideOneTo500IsRefusedWith400(page: String) async throws {
        let response = await get(AmodbSandbox(), "/3/trending/movie/day?page=\(page)")
        #expect(response.status == 400)
        let error = try decode(AmodbErrorBody.self, response)
        #expect(error.statusCode == 22)
        #expect(error.statusMessage.hasPrefix("Invalid page"))
    }

    @Test func trendingAllMixesMoviesShowsAndPeople() async throws {
        let list = try decode(TrendingPage.self, await get(AmodbSandbox(), "/3/trending/all/week"))
        var kinds = Set<String>()
        for item in list.results {
            switch item {
            case .movie: kinds.insert("movie")
            case .tv: kinds.insert("tv")
            case .person(let person):
                kinds.insert("person")
                #expect(!person.knownFor.isEmpty)
            }
        }
        #expect(kinds == ["movie", "tv", "person"])
        #expect(list.results.count == 20)
    }

    @Test func everyItemCarriesItsMediaType() async throws {
        let response = await get(AmodbSandbox(), "/3/trending/all/day")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        let results = try #require(object["results"] as? [[String: Any]])
        #expect(results.count == 20)
        for item in results {
            #expect(["movie", "tv", "person"].contains(item["media_type"] as? String))
        }
    }

    @Test func peopleAreKnownForTitlesThatExist() async throws {
        let sandbox = unlimitedSandbox()
        let list = try decode(TrendingPage.self, await get(sandbox, "/3/trending/person/week"))
        for case .person(let person) in list.results {
            #expect((1...3).contains(person.knownFor.count))
            for case .movie(let movie) in person.knownFor {
                #expect(await get(sandbox, "/3/movie/\(movie.id)").status == 200)
            }
        }
    }

    @Test func listsHaveTheGapsAmodbHas() async throws {
        let sandbox = unlimitedSandbox()
        var movies: [MovieSummary] = []
        var rawText = ""
        for page in 1...5 {
            let response = await get(sandbox, "/3/trending/movie/week?page=\(page)")
            rawText += response.text
            for case .movie(let movie) in try decode(TrendingPage.self, response).results { movies.append(movie) }
        }
        #expect(movies.contains { $0.posterPath == nil })
        #expect(movies.contains { $0.releaseDate == nil })
        #expect(movies.contains { $0.voteCount == 0 && $0.voteAverage == 0 })
        #expect(movies.contains { $0.originalLanguage != "en" })
        #expect(rawText.contains(#""poster_path":null"#))
        #expect(rawText.contains(#""release_date":"""#))
        #expect(!rawText.contains(#"\/"#))  // slashes are not escaped, as amodb sends paths
    }

    @Test func titleIsLocalizedInGerman() async throws {
        let sandbox = AmodbSandbox()
        let german = try decode(MovieDetails.self, await get(sandbox, "/3/movie/238?language=de-DE"))
        #expect(german.title == "Der Pate")
        #expect(german.originalTitle == "The Godfather")
        #expect(german.genres.map(\.name) == ["Drama", "Krimi"])
    }

    @Test(arguments: ["xx-XX", "de-AT", "it-CH", "sv-SE"])
    func languagesWithoutTranslationAreAnsweredInEnglish(language: String) async throws {
        let details = try decode(MovieDetails.self, await get(AmodbSandbox(), "/3/movie/278?language=\(language)"))
        #expect(details.title == "The Shawshank Redemption")
        #expect(details.genres.map(\.name) == ["Drama", "Crime"])
    }

    @Test(arguments: [
        ("de", "Der Pate"), ("DE-de", "Der Pate"), ("ja-JP", "ゴッドファーザー"), ("it-IT", "Il padrino"),
        ("en-US", "The Godfather"),
    ])
    func languageTagsAreReadAsAmodbReadsThem(language: String, title: String) async throws {
        let details = try decode(MovieDetails.self, await get(AmodbSandbox(), "/3/movie/238?language=\(language)"))
        #expect(details.title == title)
    }

    @Test func trendingTitlesAreLocalizedToo() async throws {
        let sandbox = unlimitedSandbox()
        var english: [Int: String] = [:]
        var spanish: [Int: String] = [:]
        for page in 1...5 {
            for case .movie(let movie) in try decode(
                TrendingPage.self, await get(sandbox, "/3/trending/movie/week?page=\(page)")
            ).results {
                english[movie.id] = movie.title
            }
            for case .movie(let movie) in try decode(
                TrendingPage.self, await get(sandbox, "/3/trending/movie/week?page=\(page)&language=es-ES")
            ).results {
                spanish[movie.id] = movie.title
            }
        }
        #expect(english[550] == "Fight Club")
        #expect(spanish[550] == "El club de la lucha")
        #expect(spanish[155] == "El caballero oscuro")
        #expect(english.count == 100)
    }

    @Test func detailsCarryNoCreditsOrRatingsUnlessAsked() async throws {
        let response = await get(AmodbSandbox(), "/3/movie/550")
        let details = try decode(MovieDetails.self, response)
        #expect(details.credits == nil)
        #expect(details.ratings == nil)
        #expect(!response.text.contains(#""credits""#))
        #expect(!response.text.contains(#""ratings""#))
        #expect(details.runtime == 139)
        #expect(details.imdbId == "tt0137523")
        #expect(details.tagline == "Mischief. Mayhem. Soap.")
        #expect(details.status == "Released")
        #expect(details.budget == 63_000_000)
        #expect(details.genres == [Genre(id: 18, name: "Drama")])
    }

    @Test func detailsAppendCreditsAndRatings() async throws {
        let response = await get(AmodbSandbox(), "/3/movie/550?append_to_response=credits,ratings")
        #expect(response.status == 200)
        let details = try decode(MovieDetails.self, response)
        let credits = try #require(details.credits)
        #expect(
            credits.cast.first
                == CastMember(
                    id: 819, name: "Edward Norton", character: "Narrator",
                    profilePath: "/4X3ce3nqMFw1kDEVWeeJmAB3USF.jpg", order: 0))
        #expect(credits.cast.contains { $0.name == "Brad Pitt" && $0.character == "Tyler Durden" })
        #expect(
            credits.crew.contains { $0.name == "David Fincher" && $0.department == "Directing" && $0.job == "Director" }
        )
        let ratings = try #require(details.ratings)
        #expect(ratings.imdb == Rating(value: 8.8, votes: 2_412_000))
        #expect(ratings.rottenTomatoes == Rating(value: 81, votes: nil))
        #expect(response.text.contains(#""votes":null"#))
    }

    @Test func ratingsMaySayNothingForASource() async throws {
        let details = try decode(
            MovieDetails.self, await get(AmodbSandbox(), "/3/movie/496243?append_to_response=ratings"))
        let ratings = try #require(details.ratings)
        #expect(ratings.kinopoisk == nil)
        #expect(ratings.imdb != nil)
    }

    @Test func otherSubResourcesAreAccepted() async throws {
        let response = await get(AmodbSandbox(), "/3/movie/27205?append_to_response=videos,images,credits")
        #expect(response.status == 200)
        let details = try decode(MovieDetails.self, response)
        #expect(details.credits?.cast.first?.name == "Leonardo DiCaprio")
        #expect(details.ratings == nil)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        #expect(object["images"] is [String: Any])
        #expect(object["videos"] is [String: Any])
        #expect(object["keywords"] == nil, "only what was asked for")
    }

    /// Each sub-resource in amodb's shape, keyed by its name inside the details object.
    @Test func everySubResourceHasAmodbsShape() async throws {
        let names = [
            "alternative_titles", "changes", "external_ids", "images", "keywords", "lists", "recommendations",
            "release_dates", "reviews", "similar", "translations", "videos", "watch/providers",
        ]
        let response = await get(AmodbSandbox(), "/3/movie/550?append_to_response=" + names.joined(separator: ","))
        #expect(response.status == 200)
        let movie = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        #expect(movie["title"] as? String == "Fight Club")
        let images = try #require(movie["images"] as? [String: Any])
        #expect(images["backdrops"] is [Any] && images["logos"] is [Any])
        let poster = try #require((images["posters"] as? [[String: Any]])?.first)
        #expect(poster["file_path"] as? String == "/pB8BM7pdSp6B6Ih7QZ4DrQ3PmJK.jpg", "the movie's own poster first")
        #expect(
            Set(poster.keys) == [
                "file_path", "width", "height", "aspect_ratio", "iso_639_1", "vote_average", "vote_count",
            ])
        let video = try #require(((movie["videos"] as? [String: Any])?["results"] as? [[String: Any]])?.first)
        #expect(video["site"] as? String == "YouTube")
        #expect(video["type"] as? String == "Trailer")
        #expect(
            Set(video.keys) == [
                "id", "key", "name", "site", "type", "official", "published_at", "iso_639_1", "iso_3166_1", "size",
            ])
        #expect((movie["external_ids"] as? [String: Any])?["imdb_id"] as? String == "tt0137523")
        let keywords = try #require((movie["keywords"] as? [String: Any])?["keywords"] as? [[String: Any]])
        #expect(!keywords.isEmpty && keywords.allSatisfy { $0["id"] is Int && $0["name"] is String })
        let releases = try #require((movie["release_dates"] as? [String: Any])?["results"] as? [[String: Any]])
        let us = try #require(
            releases.first { $0["iso_3166_1"] as? String == "US" }?["release_dates"] as? [[String: Any]])
        #expect(us.first?["release_date"] as? String == "1999-10-15T00:00:00.000Z")
        let providers = try #require((movie["watch/providers"] as? [String: Any])?["results"] as? [String: Any])
        let inUS = try #require(providers["US"] as? [String: Any])
        #expect(inUS["link"] is String && inUS["flatrate"] is [Any])
        for paged in ["recommendations", "similar", "reviews", "lists"] {
            let page = try #require(movie[paged] as? [String: Any], "\(paged)")
            #expect(
                page["page"] as? Int == 1 && page["results"] is [Any] && page["total_pages"] is Int
                    && page["total_results"] is Int)
        }
        let recommended = try #require((movie["recommendations"] as? [String: Any])?["results"] as? [[String: Any]])
        #expect(!recommended.isEmpty && recommended.allSatisfy { $0["id"] as? Int != 550 && $0["title"] is String })
        let translations = try #require((movie["translations"] as? [String: Any])?["translations"] as? [[String: Any]])
        #expect(
            translations.contains {
                $0["iso_639_1"] as? String == "es"
                    && ($0["data"] as? [String: Any])?["title"] as? String == "El club de la lucha"
            })
        #expect(((movie["alternative_titles"] as? [String: Any])?["titles"] as? [Any])?.isEmpty == false)
        #expect(((movie["changes"] as? [String: Any])?["changes"] as? [Any])?.isEmpty == true)
    }

    @Test func subResourcesAreTheSameOnEveryRunAndDifferFromMovieToMovie() async throws {
        let target = "/3/movie/%d?append_to_response=images,videos,keywords,reviews,watch/providers"
        let first = await get(AmodbSandbox(), String(format: target, 550))
        let again = await get(AmodbSandbox(), String(format: target, 550))
        let other = await get(AmodbSandbox(), String(format: target, 680))
        #expect(first.status == 200 && other.status == 200)
        #expect(first.body == again.body)
        let images = { (response: HTTPResponse) in
            (try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])?["images"]
                as? [String: Any]
        }
        #expect(NSDictionary(dictionary: images(first) ?? [:]) != NSDictionary(dictionary: images(other) ?? [:]))
    }

    @Test func anUnreleasedTitleHasNoVideosDatesOrProviders() async throws {
        let sandbox = unlimitedSandbox()
        var list: [TrendingItem] = []
        for page in 1...5 {
            list += try decode(TrendingPage.self, await get(sandbox, "/3/trending/movie/week?page=\(page)")).results
        }
        let unreleased = try #require(
            list.compactMap { item -> Int? in
                if case .movie(let movie) = item, movie.releaseDate == nil { return movie.id } else { return nil }
            }.first)
        let response = await get(
            sandbox, "/3/movie/\(unreleased)?append_to_response=videos,release_dates,watch/providers")
        let movie = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        #expect(((movie["videos"] as? [String: Any])?["results"] as? [Any])?.isEmpty == true)
        #expect(((movie["release_dates"] as? [String: Any])?["results"] as? [Any])?.isEmpty == true)
        #expect(((movie["watch/providers"] as? [String: Any])?["results"] as? [String: Any])?.isEmpty == true)
    }

    @Test func theConfigurationHasAmodbsImageHostsAndSizes() async throws {
        let response = await get(AmodbSandbox(), "/3/configuration")
        #expect(response.status == 200)
        #expect(response.headers["Cache-Control"] == "public, max-age=86400")
        let configuration = try decode(APIConfiguration.self, response)
        #expect(configuration.images.baseURL == "http://img.amodb.dev/t/p/")
        #expect(configuration.images.secureBaseURL == "https://img.amodb.dev/t/p/")
        #expect(configuration.images.backdropSizes == ["w300", "w780", "w1280", "original"])
        #expect(configuration.images.logoSizes == ["w45", "w92", "w154", "w185", "w300", "w500", "original"])
        #expect(configuration.images.posterSizes == ["w92", "w154", "w185", "w342", "w500", "w780", "original"])
        #expect(configuration.images.profileSizes == ["w45", "w185", "h632", "original"])
        #expect(configuration.images.stillSizes == ["w92", "w185", "w300", "original"])
        #expect(configuration.changeKeys.contains("title"))
    }

    @Test func theConfigurationNeedsTheKeyAndCountsAgainstTheLimit() async {
        let sandbox = AmodbSandbox(configuration: .init(requestsPerMinute: 2))
        #expect(await get(sandbox, "/3/configuration", bearer: nil).status == 401)
        #expect(await get(sandbox, "/3/configuration", bearer: "wrong").status == 401)
        #expect(await get(sandbox, "/3/configuration").status == 200)
        #expect(await get(sandbox, "/3/configuration").status == 200)
        let limited = await get(sandbox, "/3/configuration")
        #expect(limited.status == 429)
        #expect(limited.headers["Retry-After"] != nil)
    }

    @Test(arguments: [550, 680, 13, 155, 27205, 238, 278, 603, 157336, 129, 496243, 872585])
    func wellKnownMoviesHaveDetails(id: Int) async throws {
        let details = try decode(
            MovieDetails.self, await get(AmodbSandbox(), "/3/movie/\(id)?append_to_response=credits,ratings"))
        #expect(details.id == id)
        #expect(details.credits?.cast.isEmpty == false)
        #expect(details.credits?.crew.contains { $0.job == "Director" } == true)
    }

    @Test func everyTrendingMovieHasDetails() async throws {
        let sandbox = unlimitedSandbox()
        var ids = Set<Int>()
        for window in TimeWindow.allCases {
            for page in 1...5 {
                let list = try decode(
                    TrendingPage.self, await get(sandbox, "/3/trending/all/\(window.rawValue)?page=\(page)"))
                for case .movie(let movie) in list.results { ids.insert(movie.id) }
                let movies = try decode(
                    TrendingPage.self, await get(sandbox, "/3/trending/movie/\(window.rawValue)?page=\(page)"))
                for case .movie(let movie) in movies.results { ids.insert(movie.id) }
            }
        }
        #expect(ids.count == 100)
        for id in ids {
            let response = await get(sandbox, "/3/movie/\(id)?append_to_response=credits,ratings")
            #expect(response.status == 200)
            let details = try decode(MovieDetails.self, response)
            #expect(details.id == id)
            #expect(details.credits != nil)
        }
    }

    @Test func answersAreDeterministic() async {
        let first = await get(AmodbSandbox(), "/3/trending/all/day?page=3&language=fr-FR")
        let second = await get(AmodbSandbox(), "/3/trending/all/day?page=3&language=fr-FR")
        #expect(first.body == second.body)
        #expect(!first.body.isEmpty)
    }

    @Test func successHeadersMatchAmodb() async {
        let sandbox = AmodbSandbox()
        let trending = await get(sandbox, "/3/trending/movie/day")
        #expect(trending.headers["Content-Type"] == "application/json;charset=utf-8")
        #expect(trending.headers["Cache-Control"] == "public, max-age=1800")
        let details = await get(sandbox, "/3/movie/550")
        #expect(details.headers["Content-Type"] == "application/json;charset=utf-8")
        #expect(details.headers["Cache-Control"] == "public, max-age=3600")
    }
}
