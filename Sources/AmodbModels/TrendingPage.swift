/// One page of `/trending/{media_type}/{time_window}`.
public struct TrendingPage: Codable, Sendable, Equatable {
    /// The page number, from 1.
    public var page: Int
    /// The items on this page (20 on a full page).
    public var results: [TrendingItem]
    public var totalPages: Int
    public var totalResults: Int

    public init(page: Int, results: [TrendingItem], totalPages: Int, totalResults: Int) {
        self.page = page
        self.results = results
        self.totalPages = totalPages
        self.totalResults = totalResults
    }

    enum CodingKeys: String, CodingKey {
        case page, results
        case totalPages = "total_pages"
        case totalResults = "total_results"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        page = try container.decode(Int.self, forKey: .page)
        // An item of a media type this version does not know is skipped, not fatal:
        // one new kind of item at amodb must not break every trending page.
        results = try container.decode([KnownItem].self, forKey: .results).compactMap(\.item)
        totalPages = try container.decode(Int.self, forKey: .totalPages, default: page)
        totalResults = try container.decode(Int.self, forKey: .totalResults, default: results.count)
    }
}

/// Decodes a known item, or nothing for an unknown `media_type`.
private struct KnownItem: Decodable {
    let item: TrendingItem?

    private enum TypeKey: String, CodingKey { case mediaType = "media_type" }

    init(from decoder: any Decoder) throws {
        let type = try decoder.container(keyedBy: TypeKey.self).decode(String.self, forKey: .mediaType)
        item = TrendingItem.knownMediaTypes.contains(type) ? try TrendingItem(from: decoder) : nil
    }
}

/// An item of a trending page, told apart by its `media_type`.
public enum TrendingItem: Codable, Sendable, Equatable {
    case movie(MovieSummary)
    case tv(TVSummary)
    case person(PersonSummary)

    /// The item's amodb id (unique within its media type).
    public var id: Int {
        switch self {
        case .movie(let movie): movie.id
        case .tv(let show): show.id
        case .person(let person): person.id
        }
    }

    /// The title of a movie, the name of a show or a person.
    public var displayName: String {
        switch self {
        case .movie(let movie): movie.title
        case .tv(let show): show.name
        case .person(let person): person.name
        }
    }

    private enum TypeKey: String, CodingKey { case mediaType = "media_type" }

    /// The `media_type` values this version decodes.
    static let knownMediaTypes: Set<String> = ["movie", "tv", "person"]

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: TypeKey.self)
        let type = try container.decode(String.self, forKey: .mediaType)
        switch type {
        case "movie": self = .movie(try MovieSummary(from: decoder))
        case "tv": self = .tv(try TVSummary(from: decoder))
        case "person": self = .person(try PersonSummary(from: decoder))
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .mediaType, in: container, debugDescription: "unknown media_type \(type)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: TypeKey.self)
        switch self {
        case .movie(let movie):
            try container.encode("movie", forKey: .mediaType)
            try movie.encode(to: encoder)
        case .tv(let show):
            try container.encode("tv", forKey: .mediaType)
            try show.encode(to: encoder)
        case .person(let person):
            try container.encode("person", forKey: .mediaType)
            try person.encode(to: encoder)
        }
    }
}
