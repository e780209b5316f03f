import AmodbModels

/// A movie of the sandbox's catalog, in English, with its translated titles.
struct CatalogMovie: Sendable {
    var id: Int
    var title: String
    var originalTitle: String
    var originalLanguage: String
    var overview: String
    /// `""` where amodb has none.
    var tagline: String
    /// `yyyy-mm-dd`, or `""` for a title without a date (amodb sends `""`).
    var releaseDate: String
    var status: String
    var posterPath: String?
    var backdropPath: String?
    /// Minutes; 0 when unknown, as amodb sends it.
    var runtime: Int
    var genreIds: [Int]
    var budget: Int
    var revenue: Int
    var voteAverage: Double
    var voteCount: Int
    var popularity: Double
    var imdbId: String?
    /// Titles by language tag (`de-DE`); other languages get `title`.
    var localizedTitles: [String: String] = [:]
    var cast: [CastMember] = []
    var crew: [CrewMember] = []
    var ratings = Ratings()

    /// The title in a resolved language.
    func title(in language: String) -> String {
        localizedTitles[language] ?? title
    }

    /// The item as lists show it.
    func summary(in language: String) -> MovieSummary {
        MovieSummary(
            id: id, title: title(in: language), originalTitle: originalTitle, overview: overview,
            releaseDate: releaseDate, posterPath: posterPath, backdropPath: backdropPath,
            voteAverage: voteAverage, voteCount: voteCount, popularity: popularity, genreIds: genreIds,
            originalLanguage: originalLanguage)
    }

    /// `/movie/{id}`, with the sub-resources asked for.
    func details(in language: String, credits includeCredits: Bool, ratings includeRatings: Bool) -> MovieDetails {
        MovieDetails(
            id: id, title: title(in: language), originalTitle: originalTitle, overview: overview,
            tagline: tagline, releaseDate: releaseDate, posterPath: posterPath, backdropPath: backdropPath,
            runtime: runtime, genres: genreIds.map { Genre(id: $0, name: GenreNames.name(of: $0, in: language)) },
            status: status, budget: budget, revenue: revenue, voteAverage: voteAverage, voteCount: voteCount,
            popularity: popularity, imdbId: imdbId, originalLanguage: originalLanguage,
            credits: includeCredits ? Credits(cast: cast, crew: crew) : nil,
            ratings: includeRatings ? ratings : nil)
    }
}
