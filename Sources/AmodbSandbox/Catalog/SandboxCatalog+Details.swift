import AmodbModels

/// `/tv/{id}`, `/person/{id}` and `/genre/movie/list` from the catalog. What a list item
/// does not carry (a show's seasons, a person's birthday) is written by hand for famous
/// ones (`FamousTitles`) and otherwise generated from the id with a fixed seed, so each
/// answer is the same on every run; a famous person's unknown facts are `null`, never
/// invented.
extension SandboxCatalog {
    /// Show `id`'s details, its name and genres in `language`; `nil` for a show the catalog lacks.
    func tvDetails(id: Int, language: String) -> TVDetails? {
        guard let show = shows[id] else { return nil }
        let run = FamousTitles.showRuns[id] ?? Self.generatedRun(of: show)
        return TVDetails(
            id: show.id, name: show.localizedNames[language] ?? show.name, originalName: show.originalName,
            overview: show.overview, firstAirDate: show.firstAirDate.isEmpty ? nil : show.firstAirDate,
            lastAirDate: run.lastAirDate, numberOfSeasons: run.seasons, numberOfEpisodes: run.episodes,
            genres: show.genreIds.map { Genre(id: $0, name: GenreNames.name(of: $0, in: language)) },
            posterPath: show.posterPath, backdropPath: show.backdropPath, voteAverage: show.voteAverage,
            voteCount: show.voteCount, popularity: show.popularity, status: run.status,
            originalLanguage: show.originalLanguage, originCountry: show.originCountry)
    }

    /// Person `id`'s details (in English whatever the language: the catalog has no
    /// translated biographies); `nil` for a person the catalog lacks.
    func personDetails(id: Int) -> PersonDetails? {
        guard let person = people[id] else { return nil }
        let titles = (knownFor[id] ?? []).compactMap { item -> String? in
            switch item {
            case .movie(let id): movies[id]?.title
            case .tv(let id): shows[id]?.name
            case .person: nil
            }
        }
        // Someone credited nowhere in the catalog has no biography, as many on amodb have none.
        let biography =
            titles.isEmpty
            ? "" : "\(person.name) is \(Self.role(of: person.department)), known for \(Self.listed(titles))."
        let famous = FamousTitles.people.contains { $0.id == id }
        let life = famous ? FamousTitles.lives[id] : Self.generatedLife(of: id)
        let gender =
            !famous ? 0 : FamousTitles.female.contains(id) ? 1 : FamousTitles.nonBinary.contains(id) ? 3 : 2
        return PersonDetails(
            id: person.id, name: person.name, biography: biography, birthday: life?.birthday,
            deathday: life?.deathday, placeOfBirth: life?.placeOfBirth, knownForDepartment: person.department,
            profilePath: person.profilePath, popularity: person.popularity,
            alsoKnownAs: FamousTitles.alsoKnownAs[id] ?? [], gender: gender, imdbId: life?.imdbId, homepage: nil)
    }

    /// `/genre/movie/list`: every movie genre, in amodb's order, named in `language`.
    func genreList(language: String) -> GenreList {
        GenreList(genres: GenreNames.movieGenres.map { Genre(id: $0, name: GenreNames.name(of: $0, in: language)) })
    }

    /// A generated show's run: none for a show without a first air date (still in
    /// production); otherwise a season a year or so from its first, ending by 2025.
    private static func generatedRun(of show: CatalogShow) -> ShowRun {
        guard let firstYear = Int(show.firstAirDate.prefix(4)) else {
            return ShowRun(seasons: 0, episodes: 0, lastAirDate: nil, status: "In Production")
        }
        var random = SeededGenerator(seed: (UInt64(show.id) &* 0x9E37_79B9_7F4A_7C15) ^ 0x7476)
        let seasons = Int.random(in: 1...max(1, min(6, 2025 - firstYear + 1)), using: &random)
        let episodes = (0..<seasons).reduce(0) { total, _ in total + Int.random(in: 6...13, using: &random) }
        let lastYear = min(2025, firstYear + seasons - 1)
        let lastAirDate = Self.isoDate(
            lastYear, Int.random(in: 1...12, using: &random), Int.random(in: 1...28, using: &random))
        let status = lastYear >= 2024 ? "Returning Series" : random.pick(["Ended", "Ended", "Canceled"])
        return ShowRun(
            seasons: seasons, episodes: episodes, lastAirDate: max(lastAirDate, show.firstAirDate), status: status)
    }

    /// A generated person's birthday, birthplace and IMDb id; every eighth or so has none
    /// known, as amodb sends `null` for many.
    private static func generatedLife(of id: Int) -> FamousTitles.Life? {
        var random = SeededGenerator(seed: (UInt64(id) &* 0x9E37_79B9_7F4A_7C15) ^ 0x7065)
        guard Int.random(in: 0..<8, using: &random) != 0 else { return nil }
        let birthday = Self.isoDate(
            Int.random(in: 1945...2003, using: &random), Int.random(in: 1...12, using: &random),
            Int.random(in: 1...28, using: &random))
        let imdbId = "nm" + String(Int.random(in: 1_000_000...9_999_999, using: &random))
        return (birthday, nil, random.pick(Self.birthplaces), imdbId)
    }

    /// How a biography names a department's work.
    private static func role(of department: String) -> String {
        switch department {
        case "Acting": "an actor"
        case "Directing": "a director"
        case "Writing": "a writer"
        case "Sound": "a composer"
        case "Production": "a producer"
        case "Camera": "a cinematographer"
        case "Editing": "a film editor"
        default: "a filmmaker"
        }
    }

    /// `A`, `A and B`, `A, B and C`.
    private static func listed(_ titles: [String]) -> String {
        guard let last = titles.last, titles.count > 1 else { return titles.first ?? "" }
        return titles.dropLast().joined(separator: ", ") + " and " + last
    }

    private static func isoDate(_ year: Int, _ month: Int, _ day: Int) -> String {
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }
        return "\(year)-\(two(month))-\(two(day))"
    }

    private static let birthplaces = [
        "London, England, UK", "Los Angeles, California, USA", "Toronto, Ontario, Canada",
        "Sydney, New South Wales, Australia", "Lyon, France", "Madrid, Spain", "Seoul, South Korea", "Osaka, Japan",
        "Hamburg, Germany", "Brooklyn, New York, USA", "Lagos, Nigeria", "Stockholm, Sweden",
    ]
}
