/// What a trending list covers.
public enum MediaType: String, CaseIterable, Sendable, Hashable {
    case all, movie, tv, person
}

/// The period a trending list covers.
public enum TimeWindow: String, CaseIterable, Sendable, Hashable {
    case day, week
}

/// amodb's movie lists (`/movie/popular`, …), as amodb spells them.
public enum MovieList: String, CaseIterable, Sendable, Hashable {
    case popular
    case topRated = "top_rated"
    case nowPlaying = "now_playing"
    case upcoming
}

/// The amodb endpoints the proxy can forward, as paths relative to the API root (`…/3`).
/// What each one is (its template, parameters, lifetime, budget class, whether it is served
/// by default) is one entry of `RouteTable`; this type is the value a path names.
///
/// Server and client both build and match paths here, so they agree by construction.
public enum Route: Sendable, Hashable {
    /// `/trending/{media_type}/{time_window}`
    case trending(MediaType, TimeWindow)
    /// `/movie/{movie_id}`, a positive integer id.
    case movie(id: Int)
    /// `/configuration`: image hosts and sizes, which apps ask for first.
    case configuration
    /// `/movie/popular`, `/movie/top_rated`, `/movie/now_playing`, `/movie/upcoming`.
    case movieList(MovieList)
    /// `/tv/{tv_id}`, a positive integer id.
    case tv(id: Int)
    /// `/person/{person_id}`, a positive integer id.
    case person(id: Int)
    /// `/genre/movie/list`: the movie genres' names.
    case movieGenres
    /// `/search/movie`: its text is the request's `query` parameter.
    case searchMovie

    /// A route's kind: one per entry of `RouteTable` (`Kind.rawValue` is its index there),
    /// where per-route counters keep it.
    public enum Kind: Int, CaseIterable, Sendable, Hashable {
        case trending, movie, configuration, popular, topRated, nowPlaying, upcoming, tv, person, movieGenres,
            searchMovie

        /// The table's entry for this kind.
        public var entry: RouteTable.Entry { RouteTable.entries[rawValue] }
    }

    /// The route's kind.
    public var kind: Kind {
        switch self {
        case .trending: .trending
        case .movie: .movie
        case .configuration: .configuration
        case .movieList(.popular): .popular
        case .movieList(.topRated): .topRated
        case .movieList(.nowPlaying): .nowPlaying
        case .movieList(.upcoming): .upcoming
        case .tv: .tv
        case .person: .person
        case .movieGenres: .movieGenres
        case .searchMovie: .searchMovie
        }
    }

    /// The route's table entry.
    public var entry: RouteTable.Entry { kind.entry }

    /// The route's template, for logs and metrics: `/trending/{media_type}/{time_window}`.
    public var template: String { entry.template }

    /// The query parameters this route accepts; anything else is ignored by the proxy.
    public var parameters: [QueryParameter] { entry.parameters }

    /// The id in the path, for the routes that have one.
    public var id: Int? {
        switch self {
        case .movie(let id), .tv(let id), .person(let id): id
        default: nil
        }
    }

    /// The route of `kind` whose placeholders held `id`, `media` and `window`, or `nil` when
    /// they are not the ones its template has.
    public init?(kind: Kind, id: Int?, media: MediaType?, window: TimeWindow?) {
        switch kind {
        case .trending:
            guard let media, let window, id == nil else { return nil }
            self = .trending(media, window)
            return
        case .movie, .tv, .person:
            guard let id, media == nil, window == nil else { return nil }
            self = kind == .movie ? .movie(id: id) : kind == .tv ? .tv(id: id) : .person(id: id)
            return
        default:
            guard id == nil, media == nil, window == nil else { return nil }
        }
        switch kind {
        case .popular: self = .movieList(.popular)
        case .topRated: self = .movieList(.topRated)
        case .nowPlaying: self = .movieList(.nowPlaying)
        case .upcoming: self = .movieList(.upcoming)
        case .movieGenres: self = .movieGenres
        case .searchMovie: self = .searchMovie
        default: self = .configuration
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
        case .tv(let id): "/tv/\(id)"
        case .person(let id): "/person/\(id)"
        default: entry.template  // no placeholder: the template is the path
        }
    }

    /// Matches a path relative to the API root, such as `/movie/550`, against the table's
    /// templates. Returns `nil` for anything that is not exactly one of the routes: compared
    /// byte for byte, as a server compares them, never as equivalent Unicode. Every entry is
    /// matched, served or not: whether the proxy serves it is the proxy's setting.
    ///
    /// The proxy reads paths from a request's bytes instead (`RouteRequest` in AmodbProxy);
    /// this reading is its test oracle, and the two agree on every path.
    public init?(path: String) {
        let bytes = Array(path.utf8)
        for entry in RouteTable.entries {
            var position = 0
            var (id, media, window): (Int?, MediaType?, TimeWindow?) = (nil, nil, nil)
            var matched = true
            for part in entry.parts {
                switch part {
                case .literal(let literal):
                    guard bytes.count - position >= literal.count,
                        bytes[position..<position + literal.count].elementsEqual(literal)
                    else {
                        matched = false
                        break
                    }
                    position += literal.count
                case .placeholder(let placeholder):
                    let end = bytes[position...].firstIndex(of: UInt8(ascii: "/")) ?? bytes.count
                    let segment = bytes[position..<end]
                    switch placeholder {
                    case .id:
                        id = Self.positiveInteger(segment)
                        matched = id != nil
                    case .mediaType:
                        media = MediaType.allCases.first { $0.rawValue.utf8.elementsEqual(segment) }
                        matched = media != nil
                    case .timeWindow:
                        window = TimeWindow.allCases.first { $0.rawValue.utf8.elementsEqual(segment) }
                        matched = window != nil
                    }
                    position = end
                }
                if !matched { break }
            }
            if matched, position == bytes.count,
                let route = Route(kind: entry.kind, id: id, media: media, window: window)
            {
                self = route
                return
            }
        }
        return nil
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
    /// A search's text.
    case query
}
