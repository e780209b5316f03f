/// `/movie/{movie_id}`, with `credits` and `ratings` when asked for in `append_to_response`.
public struct MovieDetails: Codable, Sendable, Equatable {
    public var id: Int
    public var title: String
    public var originalTitle: String
    public var overview: String
    public var tagline: String?
    /// `yyyy-mm-dd`; `nil` when missing or `""`.
    public var releaseDate: String?
    public var posterPath: String?
    public var backdropPath: String?
    /// Running time in minutes, where known.
    public var runtime: Int?
    public var genres: [Genre]
    /// `Released`, `Post Production`, …
    public var status: String?
    /// Budget in US dollars; 0 when unknown.
    public var budget: Int
    /// Revenue in US dollars; 0 when unknown.
    public var revenue: Int
    public var voteAverage: Double
    public var voteCount: Int
    public var popularity: Double
    public var imdbId: String?
    public var originalLanguage: String
    /// Present with `append_to_response=credits`.
    public var credits: Credits?
    /// Present with `append_to_response=ratings`.
    public var ratings: Ratings?

    public init(
        id: Int, title: String, originalTitle: String, overview: String, tagline: String?,
        releaseDate: String?, posterPath: String?, backdropPath: String?, runtime: Int?,
        genres: [Genre], status: String?, budget: Int, revenue: Int, voteAverage: Double,
        voteCount: Int, popularity: Double, imdbId: String?, originalLanguage: String,
        credits: Credits? = nil, ratings: Ratings? = nil
    ) {
        self.id = id
        self.title = title
        self.originalTitle = originalTitle
        self.overview = overview
        self.tagline = tagline
        self.releaseDate = releaseDate
        self.posterPath = posterPath
        self.backdropPath = backdropPath
        self.runtime = runtime
        self.genres = genres
        self.status = status
        self.budget = budget
        self.revenue = revenue
        self.voteAverage = voteAverage
        self.voteCount = voteCount
        self.popularity = popularity
        self.imdbId = imdbId
        self.originalLanguage = originalLanguage
        self.credits = credits
        self.ratings = ratings
    }

    enum CodingKeys: String, CodingKey {
        case id, title, overview, tagline, runtime, genres, status, budget, revenue, popularity
        case credits, ratings
        case originalTitle = "original_title"
        case releaseDate = "release_date"
        case posterPath = "poster_path"
        case backdropPath = "backdrop_path"
        case voteAverage = "vote_average"
        case voteCount = "vote_count"
        case imdbId = "imdb_id"
        case originalLanguage = "original_language"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(Int.self, forKey: .id)
        title = try c.decode(String.self, forKey: .title)
        originalTitle = try c.decode(String.self, forKey: .originalTitle, default: title)
        overview = try c.decode(String.self, forKey: .overview, default: "")
        tagline = try c.decodeOptionalText(forKey: .tagline)
        releaseDate = try c.decodeOptionalText(forKey: .releaseDate)
        posterPath = try c.decodeOptionalText(forKey: .posterPath)
        backdropPath = try c.decodeOptionalText(forKey: .backdropPath)
        runtime = try c.decodeIfPresent(Int.self, forKey: .runtime)
        genres = try c.decode([Genre].self, forKey: .genres, default: [])
        status = try c.decodeOptionalText(forKey: .status)
        budget = try c.decode(Int.self, forKey: .budget, default: 0)
        revenue = try c.decode(Int.self, forKey: .revenue, default: 0)
        voteAverage = try c.decode(Double.self, forKey: .voteAverage, default: 0)
        voteCount = try c.decode(Int.self, forKey: .voteCount, default: 0)
        popularity = try c.decode(Double.self, forKey: .popularity, default: 0)
        imdbId = try c.decodeOptionalText(forKey: .imdbId)
        originalLanguage = try c.decode(String.self, forKey: .originalLanguage, default: "")
        credits = try c.decodeIfPresent(Credits.self, forKey: .credits)
        ratings = try c.decodeIfPresent(Ratings.self, forKey: .ratings)
    }
}

/// A genre: amodb's id and its name in the requested language.
public struct Genre: Codable, Sendable, Equatable, Hashable {
    public var id: Int
    public var name: String

    public init(id: Int, name: String) {
        self.id = id
        self.name = name
    }
}
