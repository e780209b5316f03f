/// `/tv/{tv_id}`: a show's details.
public struct TVDetails: Codable, Sendable, Hashable {
    /// amodb's id of the show.
    public var id: Int
    /// The name in the requested language where amodb has a translation.
    public var name: String
    /// The name in the show's original language.
    public var originalName: String
    /// The synopsis; `""` when amodb has none.
    public var overview: String
    /// `yyyy-mm-dd`; `nil` when missing, `null` or `""` (a show not yet aired).
    public var firstAirDate: String?
    /// `yyyy-mm-dd` of the latest episode aired; `nil` when none has.
    public var lastAirDate: String?
    /// Seasons amodb lists; 0 when unknown.
    public var numberOfSeasons: Int
    /// Episodes amodb lists over every season; 0 when unknown.
    public var numberOfEpisodes: Int
    /// The show's genres, named in the requested language.
    public var genres: [Genre]
    /// Image path starting with `/`; may be `nil`.
    public var posterPath: String?
    /// Image path starting with `/`; may be `nil`.
    public var backdropPath: String?
    /// 0.0 for a show with no votes.
    public var voteAverage: Double
    /// How many votes `voteAverage` is the mean of.
    public var voteCount: Int
    /// amodb's popularity score.
    public var popularity: Double
    /// `Returning Series`, `Ended`, `Canceled`, `In Production`, …
    public var status: String?
    /// ISO 639-1 code of the original language.
    public var originalLanguage: String
    /// ISO 3166-1 codes of the countries the show comes from.
    public var originCountry: [String]

    /// Makes the details of a show.
    public init(
        id: Int, name: String, originalName: String, overview: String, firstAirDate: String?, lastAirDate: String?,
        numberOfSeasons: Int, numberOfEpisodes: Int, genres: [Genre], posterPath: String?, backdropPath: String?,
        voteAverage: Double, voteCount: Int, popularity: Double, status: String?, originalLanguage: String,
        originCountry: [String]
    ) {
        self.id = id
        self.name = name
        self.originalName = originalName
        self.overview = overview
        self.firstAirDate = firstAirDate
        self.lastAirDate = lastAirDate
        self.numberOfSeasons = numberOfSeasons
        self.numberOfEpisodes = numberOfEpisodes
        self.genres = genres
        self.posterPath = posterPath
        self.backdropPath = backdropPath
        self.voteAverage = voteAverage
        self.voteCount = voteCount
        self.popularity = popularity
        self.status = status
        self.originalLanguage = originalLanguage
        self.originCountry = originCountry
    }

    enum CodingKeys: String, CodingKey {
        case id, name, overview, genres, popularity, status
        case originalName = "original_name"
        case firstAirDate = "first_air_date"
        case lastAirDate = "last_air_date"
        case numberOfSeasons = "number_of_seasons"
        case numberOfEpisodes = "number_of_episodes"
        case posterPath = "poster_path"
        case backdropPath = "backdrop_path"
        case voteAverage = "vote_average"
        case voteCount = "vote_count"
        case originalLanguage = "original_language"
        case originCountry = "origin_country"
    }

    /// `id` and `name` are required; anything else amodb sends as `null` or leaves out
    /// takes its default, as in `TVSummary`.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(Int.self, forKey: .id)
        name = try c.decode(String.self, forKey: .name)
        originalName = try c.decode(String.self, forKey: .originalName, default: name)
        overview = try c.decode(String.self, forKey: .overview, default: "")
        firstAirDate = try c.decodeOptionalText(forKey: .firstAirDate)
        lastAirDate = try c.decodeOptionalText(forKey: .lastAirDate)
        numberOfSeasons = try c.decode(Int.self, forKey: .numberOfSeasons, default: 0)
        numberOfEpisodes = try c.decode(Int.self, forKey: .numberOfEpisodes, default: 0)
        genres = try c.decode([Genre].self, forKey: .genres, default: [])
        posterPath = try c.decodeOptionalText(forKey: .posterPath)
        backdropPath = try c.decodeOptionalText(forKey: .backdropPath)
        voteAverage = try c.decode(Double.self, forKey: .voteAverage, default: 0)
        voteCount = try c.decode(Int.self, forKey: .voteCount, default: 0)
        popularity = try c.decode(Double.self, forKey: .popularity, default: 0)
        status = try c.decodeOptionalText(forKey: .status)
        originalLanguage = try c.decode(String.self, forKey: .originalLanguage, default: "")
        originCountry = try c.decode([String].self, forKey: .originCountry, default: [])
    }
}
