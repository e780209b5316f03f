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
    /// `/configuration`: image hosts and sizes, which apps ask for first.
    case configuration

    /// The route's template, for logs and metrics: `/trending/{media_type}/{time_window}`.
    public var template: String {
        switch self {
        case .trending: "/trending/{media_type}/{time_window}"
        case .movie: "/movie/{movie_id}"
        case .configuration: "/configuration"
        }
    }

    /// A route's kind, one per case of `Route`: per-route counters keep one slot per kind,
    /// `Kind.allCases.count` of them, so a route added here is counted without a hand-kept total.
    public enum Kind: Int, CaseIterable, Sendable, Hashable {
        case trending, movie, configuration

        /// A route of this kind (for labelling per-route counters with its `template`).
        public var example: Route {
            switch self {
            case .trending: .trending(.all, .day)
            case .movie: .movie(id: 1)
            case .configuration: .configuration
            }
        }
    }

    /// The route's kind: where per-route counters keep it (`Kind.rawValue` is its slot).
    public var kind: Kind {
        switch self {
        case .trending: .trending
        case .movie: .movie
        case .configuration: .configuration
        }
    }

    /// The path relative to the API root, e.g. `/trending/movie/week`.
    public var path: String {
        switch self {
        // Written out, not interpolated: a literal is no allocation, and the proxy's cache
        // key of a trending list is this path (`CacheKey` in AmodbProxy).
        case .trending(.all, .day): "/trending/all/day"
        case .trending(.all, .week): "/trending/all/week"
        case .trending(.movie, .day): "/trending/movie/day"
        case .trending(.movie, .week): "/trending/movie/week"
        case .trending(.tv, .day): "/trending/tv/day"
        case .trending(.tv, .week): "/trending/tv/week"
        case .trending(.person, .day): "/trending/person/day"
        case .trending(.person, .week): "/trending/person/week"
        case .movie(let id): "/movie/\(id)"
        case .configuration: "/configuration"
        }
    }

    /// The query parameters this route accepts; anything else is ignored by the proxy.
    public var parameters: [QueryParameter] {
        switch self {
        case .trending: [.language, .page]
        case .movie: [.language, .appendToResponse]
        case .configuration: []
        }
    }

    /// Matches a path relative to the API root, such as `/movie/550`.
    /// Returns `nil` for anything that is not exactly one of the routes: compared byte for
    /// byte, as a server compares them, never as equivalent Unicode.
    ///
    /// The proxy reads paths from a request's bytes instead (`RouteRequest` in AmodbProxy);
    /// this reading is its test oracle, and the two agree on every path.
    public init?(path: String) {
        let bytes = path.utf8
        if let rest = Self.dropping("/trending/", from: bytes[...]) {
            guard let slash = rest.firstIndex(of: UInt8(ascii: "/")),
                let media = Self.named(MediaType.self, rest[..<slash]),
                let window = Self.named(TimeWindow.self, rest[rest.index(after: slash)...])
            else { return nil }
            self = .trending(media, window)
        } else if let rest = Self.dropping("/movie/", from: bytes[...]) {
            guard let id = Self.positiveInteger(rest) else { return nil }
            self = .movie(id: id)
        } else if bytes.elementsEqual("/configuration".utf8) {
            self = .configuration
        } else {
            return nil
        }
    }

    /// `bytes` after `prefix`, or `nil` if they do not start with it.
    private static func dropping(_ prefix: String, from bytes: Substring.UTF8View) -> Substring.UTF8View? {
        bytes.starts(with: prefix.utf8) ? bytes.dropFirst(prefix.utf8.count) : nil
    }

    /// The case whose raw value is exactly `bytes` (lower case, as amodb spells it).
    private static func named<Name: CaseIterable & RawRepresentable<String>>(
        _: Name.Type, _ bytes: Substring.UTF8View
    ) -> Name? {
        Name.allCases.first { $0.rawValue.utf8.elementsEqual(bytes) }
    }

    /// Digits only (no sign, no leading zero), 1 … 2^31-1: ids are never anything else.
    static func positiveInteger(_ digits: some Collection<UInt8>) -> Int? {
        guard (1...10).contains(digits.count), digits.first != UInt8(ascii: "0") else { return nil }
        var value = 0
        for byte in digits {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value <= Int(Int32.max) ? value : nil
    }
}

/// A query parameter a route accepts.
public enum QueryParameter: String, CaseIterable, Sendable, Hashable {
    case language
    case page
    case appendToResponse = "append_to_response"
}
