import AmodbModels

/// Everything the sandbox knows: movies, shows and people (famous ones written by hand,
/// the rest generated from a fixed seed) and the trending and movie lists built from them.
/// Immutable and identical on every run, so tests can rely on exact contents.
final class SandboxCatalog: Sendable {
    /// The one catalog; building it takes a few milliseconds, once.
    static let standard = SandboxCatalog()

    /// Items on a full page of a list, as on amodb.
    static let pageSize = 20
    /// Items in each trending and movie list (5 pages).
    static let listLength = 100

    let movies: [Int: CatalogMovie]
    let shows: [Int: CatalogShow]
    let people: [Int: CatalogPerson]
    /// Up to three titles per person, most popular first.
    let knownFor: [Int: [CatalogItem]]
    /// Each trending list, in order.
    let trending: [TrendingList: [CatalogItem]]
    /// Each movie list (`/movie/popular`, …): movie ids, in order.
    let movieLists: [MovieList: [Int]]
    /// The languages some title is translated into; the others read as English.
    let translatedLanguages: Set<String>

    /// Identifies one trending list.
    struct TrendingList: Hashable, Sendable {
        var media: MediaType
        var window: TimeWindow
    }

    init() {
        var generator = CatalogGenerator()
        let generatedPeople = generator.people(actors: 70, crew: 20)
        let actors = generatedPeople.filter { $0.department == "Acting" }
        let crew = generatedPeople.filter { $0.department != "Acting" }
        let allMovies =
            FamousTitles.movies
            + generator.movies(
                count: Self.listLength - FamousTitles.movies.count, actors: actors, crew: crew)
        let allShows =
            FamousTitles.shows + generator.shows(count: Self.listLength - FamousTitles.shows.count, actors: actors)
        var popularity = SeededGenerator(seed: 0x7065_6F70_6C65)
        let famousPeople = FamousTitles.people.map { person in
            CatalogPerson(
                id: person.id, name: person.name, profilePath: FamousTitles.profilePath(of: person.id),
                department: person.department, popularity: popularity.decimal(in: 20...160, places: 3))
        }

        movies = Dictionary(uniqueKeysWithValues: allMovies.map { ($0.id, $0) })
        shows = Dictionary(uniqueKeysWithValues: allShows.map { ($0.id, $0) })
        people = Dictionary(uniqueKeysWithValues: (famousPeople + generatedPeople).map { ($0.id, $0) })

        // known_for: the person's most popular titles among the catalog's credits.
        var credited: [Int: [(item: CatalogItem, popularity: Double)]] = [:]
        for movie in allMovies {
            for personId in Set(movie.cast.map(\.id) + movie.crew.map(\.id)) {
                credited[personId, default: []].append((.movie(movie.id), movie.popularity))
            }
        }
        for show in allShows {
            for personId in Set(show.starring) {
                credited[personId, default: []].append((.tv(show.id), show.popularity))
            }
        }
        knownFor = credited.mapValues { titles in
            titles.sorted { $0.popularity > $1.popularity }.prefix(3).map(\.item)
        }

        // Trending: weekly lists by popularity, daily lists in a fixed shuffled order.
        var shuffle = SeededGenerator(seed: 0x7472_656E_6469_6E67)
        let movieWeek = allMovies.sorted { $0.popularity > $1.popularity }.map { CatalogItem.movie($0.id) }
        let showWeek = allShows.sorted { $0.popularity > $1.popularity }.map { CatalogItem.tv($0.id) }
        let knownPeople = people.values.filter { credited[$0.id] != nil }
        let personWeek = knownPeople.sorted { ($0.popularity, $0.id) > ($1.popularity, $1.id) }
            .prefix(Self.listLength).map { CatalogItem.person($0.id) }
        var lists: [TrendingList: [CatalogItem]] = [
            TrendingList(media: .movie, window: .week): movieWeek,
            TrendingList(media: .movie, window: .day): movieWeek.shuffled(using: &shuffle),
            TrendingList(media: .tv, window: .week): showWeek,
            TrendingList(media: .tv, window: .day): showWeek.shuffled(using: &shuffle),
            TrendingList(media: .person, window: .week): personWeek,
            TrendingList(media: .person, window: .day): personWeek.shuffled(using: &shuffle),
        ]
        for window in TimeWindow.allCases {
            lists[TrendingList(media: .all, window: window)] = Self.interleave(
                movies: lists[TrendingList(media: .movie, window: window)] ?? [],
                shows: lists[TrendingList(media: .tv, window: window)] ?? [],
                people: lists[TrendingList(media: .person, window: window)] ?? [])
        }
        trending = lists
        movieLists = Dictionary(uniqueKeysWithValues: MovieList.allCases.map { ($0, Self.order(allMovies, as: $0)) })

        var languages = Set<String>()
        for movie in allMovies { languages.formUnion(movie.localizedTitles.keys) }
        for show in allShows { languages.formUnion(show.localizedNames.keys) }
        translatedLanguages = languages
    }

    /// The language a request is answered in, reduced to one that changes the answer:
    /// a base language with translations, else `en-US`.
    func contentLanguage(for tag: String?) -> String {
        let resolved = AmodbLanguage.resolve(tag)
        return translatedLanguages.contains(resolved) ? resolved : AmodbLanguage.fallback
    }

    /// One page of a trending list; past the last page, an empty page (as amodb answers).
    func trendingPage(_ media: MediaType, _ window: TimeWindow, page: Int, language: String) -> TrendingPage {
        let list = trending[TrendingList(media: media, window: window)] ?? []
        let start = (page - 1) * Self.pageSize
        let slice = start < list.count ? list[start..<min(start + Self.pageSize, list.count)] : []
        let totalPages = (list.count + Self.pageSize - 1) / Self.pageSize
        return TrendingPage(
            page: page, results: slice.compactMap { item(for: $0, language: language) },
            totalPages: totalPages, totalResults: list.count)
    }

    /// `/configuration`: amodb's image hosts and sizes, and the change keys TMDB lists.
    static let configuration = APIConfiguration(
        images: ImageConfiguration(
            baseURL: "http://img.amodb.dev/t/p/", secureBaseURL: "https://img.amodb.dev/t/p/",
            backdropSizes: ["w300", "w780", "w1280", "original"],
            logoSizes: ["w45", "w92", "w154", "w185", "w300", "w500", "original"],
            posterSizes: ["w92", "w154", "w185", "w342", "w500", "w780", "original"],
            profileSizes: ["w45", "w185", "h632", "original"],
            stillSizes: ["w92", "w185", "w300", "original"]),
        changeKeys: [
            "adult", "air_date", "also_known_as", "alternative_titles", "biography", "birthday", "budget", "cast",
            "certifications", "character_names", "created_by", "crew", "deathday", "episode", "episode_number",
            "episode_run_time", "freebase_id", "freebase_mid", "general", "genres", "guest_stars", "homepage", "images",
            "imdb_id", "languages", "name", "network", "origin_country", "original_name", "original_title", "overview",
            "parts", "place_of_birth", "plot_keywords", "production_code", "production_companies",
            "production_countries",
            "releases", "revenue", "runtime", "season", "season_number", "season_regular", "spoken_languages", "status",
            "tagline", "title", "translations", "tvdb_id", "tvrage_id", "type", "video", "videos",
        ])

    /// A list item in a language; `nil` only for a reference the catalog lacks (a bug).
    private func item(for reference: CatalogItem, language: String) -> TrendingItem? {
        switch reference {
        case .movie(let id):
            return movies[id].map { .movie($0.summary(in: language)) }
        case .tv(let id):
            return shows[id].map { .tv($0.summary(in: language)) }
        case .person(let id):
            guard let person = people[id] else { return nil }
            let titles = (knownFor[id] ?? []).compactMap { item(for: $0, language: language) }
            return .person(
                PersonSummary(
                    id: person.id, name: person.name, profilePath: person.profilePath,
                    knownForDepartment: person.department, popularity: person.popularity, knownFor: titles))
        }
    }

    /// The `all` list: movies and shows alternating, a person every seventh place.
    private static func interleave(movies: [CatalogItem], shows: [CatalogItem], people: [CatalogItem]) -> [CatalogItem]
    {
        var movies = movies[...]
        var shows = shows[...]
        var people = people[...]
        var result: [CatalogItem] = []
        while result.count < listLength {
            let next: CatalogItem?
            if result.count % 7 == 6 {
                next = people.popFirst()
            } else if result.count % 2 == 0 {
                next = movies.popFirst() ?? shows.popFirst()
            } else {
                next = shows.popFirst() ?? movies.popFirst()
            }
            guard let next else { break }
            result.append(next)
        }
        return result
    }
}
