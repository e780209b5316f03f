import AmodbModels

/// Generates the bulk of the catalog from a fixed seed: plausible titles, dates, scores,
/// credits and ratings, plus the edge cases amodb really sends (no poster, no date,
/// no votes, unknown budget, ratings missing or without vote counts).
struct CatalogGenerator {
    private var random: SeededGenerator

    init(seed: UInt64 = 0x616D_6F64_6273_6278) {
        random = SeededGenerator(seed: seed)
    }

    /// Generated people: `actors` in Acting, then `crew` behind the camera.
    mutating func people(actors: Int, crew: Int) -> [CatalogPerson] {
        var names = Set<String>()
        var people: [CatalogPerson] = []
        let departments = ["Directing", "Writing", "Sound", "Camera", "Production", "Editing"]
        for index in 0..<(actors + crew) {
            var name: String
            repeat {
                name = random.pick(Self.firstNames) + " " + random.pick(Self.lastNames)
            } while !names.insert(name).inserted
            let id = 3_100_000 + index * 53
            people.append(
                CatalogPerson(
                    id: id, name: name, profilePath: FamousTitles.profilePath(of: id),
                    department: index < actors ? "Acting" : departments[index % departments.count],
                    popularity: random.decimal(in: 4...80, places: 3)))
        }
        return people
    }

    /// Generated movies, cast from `actors` and made by `crew` (both generated people).
    mutating func movies(count: Int, actors: [CatalogPerson], crew: [CatalogPerson]) -> [CatalogMovie] {
        var titles = Set<String>()
        var movies: [CatalogMovie] = []
        for index in 0..<count {
            let id = 1_000_000 + index * 131 + 7
            var title: String
            var originalTitle: String
            var originalLanguage = "en"
            var localized: [String: String] = [:]
            if index % 9 == 4, index / 9 < Self.foreignMovies.count {
                (originalLanguage, originalTitle, title) = Self.foreignMovies[index / 9]
                // amodb shows the original title to speakers of the original language.
                let language = AmodbLanguage.resolve(originalLanguage)
                if language != AmodbLanguage.fallback { localized[language] = originalTitle }
            } else {
                repeat {
                    title = makeTitle()
                } while !titles.insert(title).inserted
                originalTitle = title
            }
            let year = 2015 + Int.random(in: 0...10, using: &random)
            var releaseDate = Self.isoDate(
                year, Int.random(in: 1...12, using: &random), Int.random(in: 1...28, using: &random))
            var status = "Released"
            var voteAverage = random.decimal(in: 5.2...8.6, places: 3)
            var voteCount = Int.random(in: 40...9_000, using: &random)
            var posterPath: String? = random.imagePath()
            var backdropPath: String? = random.imagePath()
            var runtime = Int.random(in: 84...172, using: &random)
            var budget = Int.random(in: 2...220, using: &random) * 1_000_000
            var revenue = budget == 0 ? 0 : Int(Double(budget) * random.decimal(in: 0.3...6, places: 2))
            var imdbId: String? = "tt" + String(10_000_000 + id % 9_000_000)
            var tagline = random.pick(Self.taglines)
            // The edge cases clients must survive, placed at fixed positions.
            switch index % 17 {
            case 3:  // no poster yet
                posterPath = nil
            case 8:  // unannounced: no date, no votes, nothing known
                releaseDate = ""
                status = "In Production"
                voteAverage = 0
                voteCount = 0
                posterPath = nil
                backdropPath = nil
                runtime = 0
                budget = 0
                revenue = 0
                imdbId = nil
                tagline = ""
            case 12:  // upcoming: dated, but nobody has voted
                releaseDate = Self.isoDate(2026, 1 + index % 12, 1 + index % 28)
                status = "Post Production"
                voteAverage = 0
                voteCount = 0
                revenue = 0
            case 15:  // figures not disclosed
                budget = 0
                revenue = 0
            default:
                break
            }
            let genres = Array(
                Set((0..<Int.random(in: 1...3, using: &random)).map { _ in random.pick(GenreNames.movieGenres) })
            ).sorted()
            let castMembers = (0..<Int.random(in: 4...8, using: &random)).map { _ in random.pick(actors) }
            var seen = Set<Int>()
            let cast = castMembers.filter { seen.insert($0.id).inserted }.enumerated().map { order, person in
                CastMember(
                    id: person.id, name: person.name, character: makeCharacter(),
                    profilePath: person.profilePath, order: order)
            }
            let director = random.pick(crew)
            let writer = random.pick(crew)
            let composer = random.pick(crew)
            let crewMembers = [
                CrewMember(
                    id: director.id, name: director.name, department: "Directing", job: "Director",
                    profilePath: director.profilePath),
                CrewMember(
                    id: writer.id, name: writer.name, department: "Writing", job: "Screenplay",
                    profilePath: writer.profilePath),
                CrewMember(
                    id: composer.id, name: composer.name, department: "Sound", job: "Original Music Composer",
                    profilePath: composer.profilePath),
            ]
            movies.append(
                CatalogMovie(
                    id: id, title: title, originalTitle: originalTitle, originalLanguage: originalLanguage,
                    overview: voteCount == 0 && releaseDate.isEmpty ? "" : makeOverview(), tagline: tagline,
                    releaseDate: releaseDate, status: status, posterPath: posterPath, backdropPath: backdropPath,
                    runtime: runtime, genreIds: genres, budget: budget, revenue: revenue, voteAverage: voteAverage,
                    voteCount: voteCount, popularity: random.decimal(in: voteCount == 0 ? 4...30 : 10...120, places: 3),
                    imdbId: imdbId,
                    localizedTitles: localized, cast: status == "In Production" ? [] : cast, crew: crewMembers,
                    ratings: makeRatings(index: index, voteAverage: voteAverage, voteCount: voteCount)))
        }
        return movies
    }

    /// Generated shows, each starring a few of `actors`.
    mutating func shows(count: Int, actors: [CatalogPerson]) -> [CatalogShow] {
        var names = Set<String>()
        var shows: [CatalogShow] = []
        for index in 0..<count {
            let id = 200_000 + index * 97 + 3
            var name: String
            repeat {
                name = random.pick(Self.nouns) + " " + random.pick(Self.showSuffixes)
            } while !names.insert(name).inserted
            let country = random.pick([["US"], ["US"], ["GB"], ["CA"], ["AU"]])
            let year = 2012 + Int.random(in: 0...13, using: &random)
            var firstAirDate = Self.isoDate(
                year, Int.random(in: 1...12, using: &random), Int.random(in: 1...28, using: &random))
            var voteAverage = random.decimal(in: 5.8...8.9, places: 3)
            var voteCount = Int.random(in: 25...4_000, using: &random)
            var posterPath: String? = random.imagePath()
            switch index % 13 {
            case 5: posterPath = nil
            case 9:
                firstAirDate = ""
                voteAverage = 0
                voteCount = 0
            default: break
            }
            let genres = Array(
                Set((0..<Int.random(in: 1...3, using: &random)).map { _ in random.pick(GenreNames.tvGenres) })
            ).sorted()
            shows.append(
                CatalogShow(
                    id: id, name: name, originalName: name, originalLanguage: "en", overview: makeOverview(),
                    firstAirDate: firstAirDate, posterPath: posterPath, backdropPath: random.imagePath(),
                    voteAverage: voteAverage, voteCount: voteCount,
                    popularity: random.decimal(in: voteCount == 0 ? 6...30 : 15...160, places: 3),
                    genreIds: genres, originCountry: country,
                    starring: [random.pick(actors).id, random.pick(actors).id]))
        }
        return shows
    }

    private mutating func makeTitle() -> String {
        switch Int.random(in: 0..<4, using: &random) {
        case 0: "The " + random.pick(Self.adjectives) + " " + random.pick(Self.nouns)
        case 1: random.pick(Self.adjectives) + " " + random.pick(Self.nouns)
        case 2: random.pick(Self.nouns) + " of the " + random.pick(Self.adjectives) + " " + random.pick(Self.nouns)
        default: "The " + random.pick(Self.nouns)
        }
    }

    private mutating func makeCharacter() -> String {
        random.pick(Self.characterTitles) + random.pick(Self.firstNames) + " " + random.pick(Self.lastNames)
    }

    private mutating func makeOverview() -> String {
        let who = random.pick(Self.protagonists)
        let place = random.pick(Self.places)
        let discovery = random.pick(Self.discoveries)
        let twist = random.pick(Self.twists)
        return "When \(who) in \(place) \(discovery), \(twist)."
    }

    /// Ratings with the gaps amodb has: no source at all for unreleased titles,
    /// Kinopoisk or Metacritic missing for some, Rotten Tomatoes never with a count.
    private mutating func makeRatings(index: Int, voteAverage: Double, voteCount: Int) -> Ratings {
        guard voteCount > 0 else { return Ratings() }
        let imdbScore = ((voteAverage + random.decimal(in: -0.4...0.4, places: 1)) * 10).rounded() / 10
        return Ratings(
            imdb: Rating(value: min(imdbScore, 9.9), votes: voteCount * Int.random(in: 8...40, using: &random)),
            kinopoisk: index % 3 == 0
                ? nil : Rating(value: random.decimal(in: 5.5...8.5, places: 1), votes: voteCount * 3),
            metacritic: index % 4 == 1
                ? nil
                : Rating(
                    value: Double(Int.random(in: 38...92, using: &random)),
                    votes: index % 5 == 0 ? nil : Int.random(in: 9...55, using: &random)),
            rottenTomatoes: index % 6 == 2
                ? nil : Rating(value: Double(Int.random(in: 20...99, using: &random)), votes: nil),
            tmdb: Rating(value: (voteAverage * 10).rounded() / 10, votes: voteCount))
    }

    /// Non-English originals with their English titles: (language, original, English).
    private static let foreignMovies: [(String, String, String)] = [
        ("fr", "La Nuit des étoiles", "Night of the Stars"),
        ("ko", "바다의 끝", "The End of the Sea"),
        ("es", "El último verano", "The Last Summer"),
        ("ja", "静かな海", "The Quiet Sea"),
        ("de", "Das stille Haus", "The Silent House"),
        ("it", "La città vuota", "The Empty City"),
        ("pt", "O Rio Sem Fim", "The Endless River"),
        ("sv", "Vinterljus", "Winter Light"),
        ("tr", "Kayıp Şehir", "The Lost City"),
        ("hi", "आखिरी ट्रेन", "The Last Train"),
    ]

    private static let adjectives = [
        "Silent", "Crimson", "Last", "Hidden", "Broken", "Golden", "Midnight", "Distant", "Frozen", "Burning",
        "Electric", "Hollow", "Restless", "Wild", "Quiet", "Lost", "Northern", "Paper", "Glass", "Iron",
        "Velvet", "Neon", "Savage", "Secret", "Endless",
    ]
    private static let nouns = [
        "Harbor", "Kingdom", "Signal", "Orchard", "Frontier", "Echo", "Garden", "River", "Empire", "Protocol",
        "Horizon", "Lighthouse", "Carnival", "Tide", "Summer", "Witness", "Machine", "Voyage", "Covenant", "Station",
        "Orbit", "Verdict", "Harvest", "Reckoning", "Shadow",
    ]
    private static let showSuffixes = [
        "Falls", "Bay", "Street", "Division", "Chronicles", "Files", "Heights", "Academy", "Unit", "Road",
    ]
    private static let taglines = [
        "Some secrets refuse to stay buried.", "Every choice has a price.", "The truth is only the beginning.",
        "Nobody leaves unchanged.", "One night. No way back.", "Trust no one.", "Home is where the fight is.",
        "",
    ]
    private static let firstNames = [
        "Ava", "Liam", "Maya", "Noah", "Iris", "Theo", "Lena", "Omar", "Clara", "Felix", "Nora", "Hugo",
        "Zoe", "Ezra", "Ruby", "Mateo", "Elsa", "Kai", "Mila", "Jonah", "Ines", "Rafael", "Yuki", "Sven",
        "Priya", "Dario", "Hana", "Tomas", "Aisha", "Leon",
    ]
    private static let lastNames = [
        "Whitaker", "Moreau", "Okafor", "Lindqvist", "Navarro", "Brennan", "Castellano", "Haddad", "Kowalski",
        "Nakamura", "Fischer", "Duarte", "Sorensen", "Abernathy", "Petrov", "Quinlan", "Rahman", "Vasquez",
        "Holloway", "Adeyemi", "Marchetti", "Eriksen", "Tanaka", "Mbeki", "Calloway",
    ]
    private static let characterTitles = ["", "", "", "Detective ", "Dr. ", "Captain ", "Agent ", "Sister "]
    private static let protagonists = [
        "a retired detective", "a young cartographer", "an estranged sister", "a night-shift nurse",
        "a disgraced chef", "a small-town sheriff", "a grieving astronomer", "an ambitious journalist",
        "a reluctant heir", "a salvage diver",
    ]
    private static let places = [
        "a fading coastal town", "1970s Lisbon", "a snowed-in research station", "the outskirts of Detroit",
        "a remote Scottish island", "near-future Tokyo", "a border town in Texas", "a crumbling Venetian palazzo",
    ]
    private static let discoveries = [
        "finds a letter that should not exist", "witnesses a crime no one else believes",
        "inherits a house full of locked rooms", "intercepts a signal from the deep sea",
        "is hired to find a missing violinist", "uncovers a decades-old family secret",
    ]
    private static let twists = [
        "the search leads somewhere no map can follow", "every answer raises a more dangerous question",
        "old loyalties are tested to breaking point", "the past proves far from finished",
        "a quiet life turns into a race against time", "the line between friend and enemy disappears",
    ]

    /// `yyyy-mm-dd` from its parts.
    private static func isoDate(_ year: Int, _ month: Int, _ day: Int) -> String {
        func pad(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(year)-\(pad(month))-\(pad(day))"
    }
}
