/// What a trending list covers.
public enum MediaType: String, CaseIterable, Sendable, Hashable {
    case all, movie, tv, person
}

/// The period a trending list covers.
public enum TimeWindow: String, CaseIterable, Sendable, Hashable {
    case day, week
}

/// The amodb endpoints the proxy forwards, as paths relative to the API root (`…/3`).
///
/// Server and client both build and match paths here, so they agree by construction.
public enum Route: Sendable, Hashable {
    /// `/trending/{media_type}/{time_window}`
    case trending(MediaType, TimeWindow)
    /// `/movie/{movie_id}`, a positive integer id.
    case movie(id: Int)

    /// The route's template, for logs and metrics: `/trending/{media_type}/{time_window}`.
    public var template: String {
        switch self {
        case .trending: "/trending/{media_type}/{time_window}"
        case .movie: "/movie/{movie_id}"
        }
    }

    /// The path relative to the API root, e.g. `/trending/movie/week`.
    public var path: String {
        switch self {
        case .trending(let media, let window): "/trending/\(media.rawValue)/\(window.rawValue)"
        case .movie(let id): "/movie/\(id)"
        }
    }

    /// The query parameters this route accepts; anything else is ignored by the proxy.
    public var parameters: [QueryParameter] {
        switch self {
        case .trending: [.language, .page]
        case .movie: [.language, .appendToResponse]
        }
    }

    /// Matches a path relative to the API root (segments already split and decoded).
    /// Returns `nil` for anything that is not exactly one of the routes.
    public init?(segments: [Substring]) {
        switch segments.count {
        case 3 where segments[0] == "trending":
            guard let media = MediaType(rawValue: String(segments[1])),
                  let window = TimeWindow(rawValue: String(segments[2]))
            else { return nil }
            self = .trending(media, window)
        case 2 where segments[0] == "movie":
            guard let id = Route.positiveInteger(segments[1]) else { return nil }
            self = .movie(id: id)
        default:
            return nil
        }
    }

    /// Matches a path relative to the API root, such as `/movie/550`.
    public init?(path: String) {
        guard path.first == "/" else { return nil }
        self.init(segments: path.dropFirst().split(separator: "/", omittingEmptySubsequences: false))
    }

    /// Digits only (no sign, no leading zero), 1 … 2^31-1: ids are never anything else.
    static func positiveInteger(_ text: Substring) -> Int? {
        guard (1...10).contains(text.count), text.first != "0",
              text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              let value = Int(text), value <= Int(Int32.max)
        else { return nil }
        return value
    }
}

/// A query parameter a route accepts.
public enum QueryParameter: String, CaseIterable, Sendable, Hashable {
    case language
    case page
    case appendToResponse = "append_to_response"
}
