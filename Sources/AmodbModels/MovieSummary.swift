/// A movie as it appears in lists (trending, movie lists, search, a person's `known_for`).
public struct MovieSummary: Codable, Sendable, Hashable {
    public var id: Int
    /// The title in the requested language where amodb has a translation.
    public var title: String
    public var originalTitle: String
    public var overview: String
    /// `yyyy-mm-dd`; `nil` when amodb sends it missing or `""`.
    public var releaseDate: String?
    /// Image path starting with `/`, for `https://img.amodb.dev/t/p/{size}{path}`; may be `nil`.
    public var posterPath: String?
    public var backdropPath: String?
    /// 0.0 for a title with no votes.
    public var voteAverage: Double
    public var voteCount: Int
    public var popularity: Double
    public var genreIds: [Int]
    public var adult: Bool
    public var originalLanguage: String
    public var video: Bool

    public init(
        id: Int, title: String, originalTitle: String, overview: String, releaseDate: String?,
        posterPath: String?, backdropPath: String?, voteAverage: Double, voteCount: Int,
        popularity: Double, genreIds: [Int], adult: Bool = false, originalLanguage: String,
        video: Bool = false
    ) {
        self.id = id
        self.title = title
        self.originalTitle = originalTitle
        self.overview = overview
        self.releaseDate = releaseDate
        self.posterPath = posterPath
        self.backdropPath = backdropPath
        self.voteAverage = voteAverage
        self.voteCount = voteCount
        self.popularity = popularity
        self.genreIds = genreIds
        self.adult = adult
        self.originalLanguage = originalLanguage
        self.video = video
    }

    enum CodingKeys: String, CodingKey {
        case id, title, overview, popularity, adult, video
        case originalTitle = "original_title"
        case releaseDate = "release_date"
        case posterPath = "poster_path"
        case backdropPath = "backdrop_path"
        case voteAverage = "vote_average"
        case voteCount = "vote_count"
        case genreIds = "genre_ids"
        case originalLanguage = "original_language"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(Int.self, forKey: .id)
        title = try c.decode(String.self, forKey: .title)
        originalTitle = try c.decode(String.self, forKey: .originalTitle, default: title)
        overview = try c.decode(String.self, forKey: .overview, default: "")
        releaseDate = try c.decodeOptionalText(forKey: .releaseDate)
        posterPath = try c.decodeOptionalText(forKey: .posterPath)
        backdropPath = try c.decodeOptionalText(forKey: .backdropPath)
        voteAverage = try c.decode(Double.self, forKey: .voteAverage, default: 0)
        voteCount = try c.decode(Int.self, forKey: .voteCount, default: 0)
        popularity = try c.decode(Double.self, forKey: .popularity, default: 0)
        genreIds = try c.decode([Int].self, forKey: .genreIds, default: [])
        adult = try c.decode(Bool.self, forKey: .adult, default: false)
        originalLanguage = try c.decode(String.self, forKey: .originalLanguage, default: "")
        video = try c.decode(Bool.self, forKey: .video, default: false)
    }
}
