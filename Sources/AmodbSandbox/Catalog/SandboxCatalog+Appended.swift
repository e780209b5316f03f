import AmodbModels

/// The sub-resources `append_to_response` adds to a movie, made from the movie and a
/// generator seeded with its id and the sub-resource's name: the same bytes on every run,
/// different for every movie. Unreleased titles have what amodb has for them: no videos,
/// release dates, providers or reviews.
extension SandboxCatalog {
    /// Movie `id`'s details in `language`, with each sub-resource `names` asks for
    /// (names amodb does not know add nothing, as on amodb); `nil` for a movie the catalog lacks.
    func movieAnswer(id: Int, language: String, appending names: [String]) -> MovieAnswer? {
        guard let movie = movies[id] else { return nil }
        let details = movie.details(
            in: language, credits: names.contains("credits"), ratings: names.contains("ratings"))
        let resources = names.compactMap { name in resource(name, of: movie, language: language).map { (name, $0) } }
        return MovieAnswer(details: details, appended: resources)
    }

    /// Sub-resource `name` of `movie`, or `nil` for `credits` and `ratings` (fields of the
    /// details themselves) and for a name amodb does not know.
    private func resource(_ name: String, of movie: CatalogMovie, language: String) -> (any Encodable & Sendable)? {
        var random = SeededGenerator(seed: Self.seed(movie.id, name))
        let released = !movie.releaseDate.isEmpty
        switch name {
        case "images": return images(of: movie, &random)
        case "videos": return MovieVideos(results: released ? videos(of: movie, &random) : [])
        case "external_ids": return externalIDs(of: movie, &random)
        case "keywords":
            return MovieKeywords(
                keywords: Array(Self.keywords.shuffled(using: &random).prefix(Int.random(in: 2...6, using: &random))))
        case "release_dates": return ReleaseDates(results: released ? releaseDates(of: movie, &random) : [])
        case "watch/providers": return WatchProviders(results: released ? providers(of: movie, &random) : [:])
        case "recommendations": return firstPage(of: recommendations(for: movie).map { $0.summary(in: language) })
        case "similar": return firstPage(of: similar(to: movie).map { $0.summary(in: language) })
        case "reviews": return firstPage(of: released && movie.voteCount > 0 ? reviews(of: movie, &random) : [])
        case "lists": return firstPage(of: lists(holding: movie, &random))
        case "translations": return MovieTranslations(translations: translations(of: movie))
        case "alternative_titles": return AlternativeTitles(titles: alternativeTitles(of: movie))
        case "changes": return MovieChanges(changes: [])
        default: return nil
        }
    }

    /// A seed from the movie's id and the sub-resource's name (FNV-1a: `Hasher` is seeded
    /// anew in every process, and the catalog must not change from run to run).
    private static func seed(_ id: Int, _ name: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(id)
        for byte in name.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        return hash
    }

    private func images(of movie: CatalogMovie, _ random: inout SeededGenerator) -> MovieImages {
        func image(_ path: String, width: Int, height: Int, language: String?) -> ImageFile {
            ImageFile(
                aspectRatio: (Double(width) / Double(height) * 1000).rounded() / 1000, height: height, width: width,
                language: language, filePath: path, voteAverage: random.decimal(in: 5.1...5.8, places: 3),
                voteCount: Int.random(in: 0...24, using: &random))
        }
        let posters = ([movie.posterPath].compactMap { $0 } + [random.imagePath(), random.imagePath()])
            .enumerated().map { image($1, width: 2000, height: 3000, language: ["en", nil, "de"][$0 % 3]) }
        let backdrops = ([movie.backdropPath].compactMap { $0 } + [random.imagePath()])
            .map { image($0, width: 3840, height: 2160, language: nil) }
        let logo = String(random.imagePath().dropLast(4)) + ".png"
        return MovieImages(
            backdrops: backdrops, logos: [image(logo, width: 1000, height: 400, language: "en")], posters: posters)
    }

    private func videos(of movie: CatalogMovie, _ random: inout SeededGenerator) -> [Video] {
        let kinds = [("Official Trailer", "Trailer"), ("Teaser", "Teaser"), ("Official Clip", "Clip")]
        return kinds.prefix(Int.random(in: 1...3, using: &random)).enumerated().map { index, kind in
            Video(
                id: Self.hexID(&random), key: Self.youTubeKey(&random), name: kind.0, site: "YouTube", type: kind.1,
                official: true,
                publishedAt: Self.timestamp(Self.monthsBefore(movie.releaseDate, 4 - index), "16:00:0\(index)"),
                language: "en", country: "US", size: random.pick([720, 1080, 2160]))
        }
    }

    private func externalIDs(of movie: CatalogMovie, _ random: inout SeededGenerator) -> ExternalIDs {
        let known = movie.imdbId != nil
        let handle = movie.title.filter { $0.isLetter || $0.isNumber }
        return ExternalIDs(
            imdbId: movie.imdbId,
            wikidataId: known ? "Q" + String(Int.random(in: 100_000...99_999_999, using: &random)) : nil,
            facebookId: known && movie.popularity > 40 ? handle : nil, instagramId: nil,
            twitterId: known && movie.popularity > 60 ? handle : nil)
    }

    private func releaseDates(of movie: CatalogMovie, _ random: inout SeededGenerator) -> [CountryReleases] {
        let theatrical = Self.timestamp(movie.releaseDate, "00:00:00")
        let digital = Self.timestamp(Self.monthsBefore(movie.releaseDate, -4), "00:00:00")
        let rating = Int.random(in: 0...2, using: &random)
        return [
            CountryReleases(
                country: "DE",
                releaseDates: [
                    Release(
                        certification: ["6", "12", "16"][rating], descriptors: [], language: "de", note: "",
                        releaseDate: theatrical, type: 3)
                ]),
            CountryReleases(
                country: "GB",
                releaseDates: [
                    Release(
                        certification: ["12A", "15", "18"][rating], descriptors: [], language: "", note: "",
                        releaseDate: theatrical, type: 3)
                ]),
            CountryReleases(
                country: "US",
                releaseDates: [
                    Release(
                        certification: ["PG", "PG-13", "R"][rating], descriptors: [], language: "", note: "",
                        releaseDate: theatrical, type: 3),
                    Release(
                        certification: ["PG", "PG-13", "R"][rating], descriptors: [], language: "", note: "",
                        releaseDate: digital, type: 4),
                ]),
        ]
    }

    private func providers(of movie: CatalogMovie, _ random: inout SeededGenerator) -> [String: CountryProviders] {
        var results: [String: CountryProviders] = [:]
        for country in ["DE", "US"] {
            let streaming = Self.streamingServices.shuffled(using: &random).prefix(
                Int.random(in: 0...2, using: &random))
            results[country] = CountryProviders(
                link: "https://www.amodb.dev/movie/\(movie.id)/watch?locale=\(country)",
                flatrate: Array(streaming), rent: Self.shops, buy: Self.shops)
        }
        return results
    }

    /// Other movies sharing a genre with `movie`, most popular first.
    private func recommendations(for movie: CatalogMovie) -> [CatalogMovie] {
        movies.values.filter { $0.id != movie.id && !Set($0.genreIds).isDisjoint(with: movie.genreIds) }
            .sorted { ($0.popularity, $0.id) > ($1.popularity, $1.id) }
    }

    /// Other movies by how many genres they share with `movie`, then by score.
    private func similar(to movie: CatalogMovie) -> [CatalogMovie] {
        let genres = Set(movie.genreIds)
        return movies.values.filter { $0.id != movie.id }
            .map { (movie: $0, shared: genres.intersection($0.genreIds).count) }
            .filter { $0.shared > 0 }
            .sorted { ($0.shared, $0.movie.voteAverage, $0.movie.id) > ($1.shared, $1.movie.voteAverage, $1.movie.id) }
            .map(\.movie)
    }

    private func reviews(of movie: CatalogMovie, _ random: inout SeededGenerator) -> [Review] {
        (0..<Int.random(in: 0...3, using: &random)).map { index in
            let author = random.pick(Self.reviewers)
            let created = Self.timestamp(Self.monthsBefore(movie.releaseDate, -(index + 1)), "12:3\(index):00")
            let id = Self.hexID(&random)
            return Review(
                author: author,
                authorDetails: ReviewAuthor(
                    name: "", username: author, avatarPath: index == 0 ? random.imagePath() : nil,
                    rating: index == 2 ? nil : Double(Int.random(in: 4...10, using: &random))),
                content: random.pick(Self.reviewTexts).replacingTitle(with: movie.title), createdAt: created, id: id,
                updatedAt: created, url: "https://www.amodb.dev/review/\(id)")
        }
    }

    private func lists(holding movie: CatalogMovie, _ random: inout SeededGenerator) -> [UserList] {
        Self.listNames.shuffled(using: &random).prefix(Int.random(in: 0...3, using: &random)).map { name in
            UserList(
                description: "", favoriteCount: Int.random(in: 0...40, using: &random),
                id: Int.random(in: 1_000_000...9_999_999, using: &random),
                itemCount: Int.random(in: 5...400, using: &random),
                language: "en", listType: "movie", name: name,
                posterPath: Bool.random(using: &random) ? random.imagePath() : nil)
        }
    }

    private func translations(of movie: CatalogMovie) -> [Translation] {
        let english = Translation(
            country: "US", language: "en", name: "English", englishName: "English",
            data: TranslatedTexts(
                homepage: "", overview: movie.overview, runtime: movie.runtime, tagline: movie.tagline,
                title: movie.title))
        let others = movie.localizedTitles.sorted { $0.key < $1.key }.map { tag, title in
            let (language, country) = Self.split(tag)
            let names = Self.languageNames[language] ?? (language, language)
            return Translation(
                country: country, language: language, name: names.own, englishName: names.english,
                data: TranslatedTexts(homepage: "", overview: "", runtime: movie.runtime, tagline: "", title: title))
        }
        return [english] + others
    }

    private func alternativeTitles(of movie: CatalogMovie) -> [AlternativeTitle] {
        var titles = movie.localizedTitles.sorted { $0.key < $1.key }.map { tag, title in
            AlternativeTitle(country: Self.split(tag).country, title: title, type: "")
        }
        if movie.originalTitle != movie.title {
            titles.append(AlternativeTitle(country: "US", title: movie.title, type: "English title"))
        }
        return titles
    }

    /// The first page of a list, as `append_to_response` sends it (20 items a page).
    private func firstPage<Item: Encodable & Sendable>(of items: [Item]) -> ResultPage<Item> {
        ResultPage(
            page: 1, results: Array(items.prefix(Self.pageSize)),
            totalPages: (items.count + Self.pageSize - 1) / Self.pageSize,
            totalResults: items.count)
    }

    // MARK: Dates and ids

    /// `yyyy-mm-dd` moved `months` earlier (later when negative), day kept (at most 28).
    private static func monthsBefore(_ date: String, _ months: Int) -> String {
        let parts = date.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3 else { return date }
        let index = parts[0] * 12 + (parts[1] - 1) - months
        return isoDate(index / 12, index % 12 + 1, min(parts[2], 28))
    }

    private static func isoDate(_ year: Int, _ month: Int, _ day: Int) -> String {
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }
        return "\(year)-\(two(month))-\(two(day))"
    }

    /// amodb's timestamps: `yyyy-mm-ddThh:mm:ss.000Z`.
    private static func timestamp(_ date: String, _ time: String) -> String {
        date + "T" + time + ".000Z"
    }

    /// `tag`'s language and country: `es-ES` → (`es`, `ES`).
    private static func split(_ tag: String) -> (language: String, country: String) {
        let parts = tag.split(separator: "-")
        return (String(parts.first ?? ""), parts.count > 1 ? String(parts[parts.count - 1]) : "")
    }

    /// 24 hexadecimal digits, as amodb's ids of videos and reviews.
    private static func hexID(_ random: inout SeededGenerator) -> String {
        String((0..<24).map { _ in random.pick(Array("0123456789abcdef")) })
    }

    /// 11 characters of YouTube's alphabet.
    private static func youTubeKey(_ random: inout SeededGenerator) -> String {
        String(
            (0..<11).map { _ in random.pick(Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")) }
        )
    }

    // MARK: Vocabulary

    private static let keywords: [Keyword] = [
        Keyword(id: 818, name: "based on novel or book"), Keyword(id: 825, name: "support group"),
        Keyword(id: 1701, name: "hero"), Keyword(id: 4565, name: "dystopia"), Keyword(id: 6054, name: "friendship"),
        Keyword(id: 9748, name: "revenge"), Keyword(id: 4379, name: "time travel"), Keyword(id: 10051, name: "heist"),
        Keyword(id: 9882, name: "space"), Keyword(id: 9672, name: "based on true story"),
        Keyword(id: 10714, name: "serial killer"),
        Keyword(id: 179431, name: "duringcreditsstinger"), Keyword(id: 9663, name: "sequel"),
        Keyword(id: 14964, name: "drug dealer"),
        Keyword(id: 6149, name: "police"), Keyword(id: 12565, name: "psychological thriller"),
    ]

    private static let streamingServices: [WatchProvider] = [
        provider(8, "Netflix", 0), provider(9, "Amazon Prime Video", 1), provider(337, "Disney Plus", 2),
        provider(1899, "Max", 3), provider(15, "Hulu", 4), provider(531, "Paramount Plus", 5),
    ]

    private static let shops: [WatchProvider] = [provider(2, "Apple TV", 4), provider(3, "Google Play Movies", 7)]

    /// A provider with a logo path made from its id, so it is the same in every answer.
    private static func provider(_ id: Int, _ name: String, _ priority: Int) -> WatchProvider {
        var random = SeededGenerator(seed: UInt64(id))
        return WatchProvider(
            logoPath: random.imagePath(), providerId: id, providerName: name, displayPriority: priority)
    }

    private static let reviewers = [
        "CinemaSerf", "Geronimo1967", "Manuel São Paulo", "r96sk", "JPV852", "Wuchak", "SWITCH.",
    ]

    private static let reviewTexts = [
        "TITLE is one of those films that gets better every time you watch it. The performances hold it together.",
        "I went in with low expectations and came out impressed. TITLE takes its time, and it pays off.",
        "Well made, but TITLE never quite reaches the heights its first act promises. Still worth a look.",
        "A genuinely great piece of cinema. TITLE earns its reputation.",
    ]

    private static let listNames = [
        "Favourites", "Watchlist", "Movies to see before you die", "Weekend picks", "Rewatchable", "Best of the decade",
    ]

    /// Each base language's own name and its English name, as `translations` gives them.
    private static let languageNames: [String: (own: String, english: String)] = [
        "en": ("English", "English"), "de": ("Deutsch", "German"), "fr": ("Français", "French"),
        "es": ("Español", "Spanish"),
        "it": ("Italiano", "Italian"), "pt": ("Português", "Portuguese"), "ja": ("日本語", "Japanese"),
        "ko": ("한국어/조선말", "Korean"),
        "zh": ("普通话", "Mandarin"), "ru": ("Pусский", "Russian"), "nl": ("Nederlands", "Dutch"),
        "pl": ("Polski", "Polish"),
        "sv": ("svenska", "Swedish"), "tr": ("Türkçe", "Turkish"),
    ]
}

extension String {
    /// A review text with `TITLE` replaced by the movie's title.
    fileprivate func replacingTitle(with title: String) -> String {
        split(separator: "TITLE", omittingEmptySubsequences: false).joined(separator: title)
    }
}
