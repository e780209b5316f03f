import AmodbModels

/// A TV show of the sandbox's catalog, in English, with its translated names.
struct CatalogShow: Sendable {
    var id: Int
    var name: String
    var originalName: String
    var originalLanguage: String
    var overview: String
    /// `yyyy-mm-dd`, or `""` for a show without a date.
    var firstAirDate: String
    var posterPath: String?
    var backdropPath: String?
    var voteAverage: Double
    var voteCount: Int
    var popularity: Double
    var genreIds: [Int]
    var originCountry: [String]
    /// Names by language tag; other languages get `name`.
    var localizedNames: [String: String] = [:]
    /// People the show is known for (they list it in `known_for`).
    var starring: [Int] = []

    /// The item as lists show it.
    func summary(in language: String) -> TVSummary {
        TVSummary(
            id: id, name: localizedNames[language] ?? name, originalName: originalName, overview: overview,
            firstAirDate: firstAirDate, posterPath: posterPath, backdropPath: backdropPath,
            voteAverage: voteAverage, voteCount: voteCount, popularity: popularity, genreIds: genreIds,
            originalLanguage: originalLanguage, originCountry: originCountry)
    }
}
