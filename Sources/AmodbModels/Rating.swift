/// One source's rating of a title: a score and, where the source says, how many voted.
public struct Rating: Codable, Sendable, Equatable, Hashable {
    /// The score, on the source's own scale (IMDb 0–10, Metacritic 0–100, …).
    public var value: Double
    /// How many votes the score rests on; `nil` where the source does not say.
    public var votes: Int?

    public init(value: Double, votes: Int?) {
        self.value = value
        self.votes = votes
    }
}

/// The `ratings` object amodb appends to movie details (`append_to_response=ratings`).
/// Each source is `null` when amodb has no rating from it.
public struct Ratings: Codable, Sendable, Equatable, Hashable {
    public var imdb: Rating?
    public var kinopoisk: Rating?
    public var metacritic: Rating?
    public var rottenTomatoes: Rating?
    public var tmdb: Rating?

    public init(
        imdb: Rating? = nil, kinopoisk: Rating? = nil, metacritic: Rating? = nil,
        rottenTomatoes: Rating? = nil, tmdb: Rating? = nil
    ) {
        self.imdb = imdb
        self.kinopoisk = kinopoisk
        self.metacritic = metacritic
        self.rottenTomatoes = rottenTomatoes
        self.tmdb = tmdb
    }

    enum CodingKeys: String, CodingKey {
        case imdb, kinopoisk, metacritic, tmdb
        case rottenTomatoes = "rotten_tomatoes"
    }
}
