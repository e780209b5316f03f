/// A TV show as it appears in lists.
public struct TVSummary: Codable, Sendable, Equatable {
    public var id: Int
    public var name: String
    public var originalName: String
    public var overview: String
    /// `yyyy-mm-dd`; `nil` when missing or `""`.
    public var firstAirDate: String?
    public var posterPath: String?
    public var backdropPath: String?
    public var voteAverage: Double
    public var voteCount: Int
    public var popularity: Double
    public var genreIds: [Int]
    public var originalLanguage: String
    public var originCountry: [String]

    public init(
        id: Int, name: String, originalName: String, overview: String, firstAirDate: String?,
        posterPath: String?, backdropPath: String?, voteAverage: Double, voteCount: Int,
        popularity: Double, genreIds: [Int], originalLanguage: String, originCountry: [String]
    ) {
        self.id = id
        self.name = name
        self.originalName = originalName
        self.overview = overview
        self.firstAirDate = firstAirDate
        self.posterPath = posterPath
        self.backdropPath = backdropPath
        self.voteAverage = voteAverage
        self.voteCount = voteCount
        self.popularity = popularity
        self.genreIds = genreIds
        self.originalLanguage = originalLanguage
        self.originCountry = originCountry
    }

    enum CodingKeys: String, CodingKey {
        case id, name, overview, popularity
        case originalName = "original_name"
        case firstAirDate = "first_air_date"
        case posterPath = "poster_path"
        case backdropPath = "backdrop_path"
        case voteAverage = "vote_average"
        case voteCount = "vote_count"
        case genreIds = "genre_ids"
        case originalLanguage = "original_language"
        case originCountry = "origin_country"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(Int.self, forKey: .id)
        name = try c.decode(String.self, forKey: .name)
        originalName = try c.decode(String.self, forKey: .originalName, default: name)
        overview = try c.decode(String.self, forKey: .overview, default: "")
        firstAirDate = try c.decodeOptionalText(forKey: .firstAirDate)
        posterPath = try c.decodeOptionalText(forKey: .posterPath)
        backdropPath = try c.decodeOptionalText(forKey: .backdropPath)
        voteAverage = try c.decode(Double.self, forKey: .voteAverage, default: 0)
        voteCount = try c.decode(Int.self, forKey: .voteCount, default: 0)
        popularity = try c.decode(Double.self, forKey: .popularity, default: 0)
        genreIds = try c.decode([Int].self, forKey: .genreIds, default: [])
        originalLanguage = try c.decode(String.self, forKey: .originalLanguage, default: "")
        originCountry = try c.decode([String].self, forKey: .originCountry, default: [])
    }
}
