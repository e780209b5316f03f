/// `/genre/movie/list`: every movie genre amodb knows, named in the requested language.
public struct GenreList: Codable, Sendable, Hashable {
    /// The genres, in amodb's order.
    public var genres: [Genre]

    /// Makes a list.
    public init(genres: [Genre]) {
        self.genres = genres
    }
}
