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
        // Written out, not interpolated: the path is the cache key, built on every hit.
        case .trending(.all, .day): "/trending/all/day"
        case .trending(.all, .week): "/trending/all/week"
        case .trending(.movie, .day): "/trending/movie/day"
        case .trending(.movie, .week): "/trending/movie/week"
        case .trending(.tv, .day): "/trending/tv/day"
        case .trending(.tv, .week): "/trending/tv/week"
        case .trending(.person, .day): "/trending/person/day"
        case .trending(.person, .week): "/trending/person/week"
        case .movie(let id):
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.maxMoviePathBytes) { buffer in
                let count = Self.writeMoviePath(id, to: buffer.baseAddress!)
                return String(decoding: UnsafeBufferPointer(rebasing: buffer[..<count]), as: UTF8.self)
            }
        case .configuration: "/configuration"
        }
    }

    /// Most bytes `path` takes: a movie's, at most `maxMoviePathBytes`; every other path is
    /// a literal of at most 21 bytes (`/trending/person/week`).
    static let maxPathBytes = maxMoviePathBytes
    /// Most bytes `/movie/<id>` takes: the prefix, a sign and the digits of `Int.min`.
    static let maxMoviePathBytes = 7 + 20

    /// Writes `/movie/<id>` at `target`, which has room for `maxMoviePathBytes`, and returns
    /// how many bytes it wrote: the movie route's path is the start of every movie's cache
    /// key, and an `Int`'s description and a concatenation cost more than the rest of the key.
    /// A negative id (only code makes one: the parser refuses a sign) gets its `-`.
    static func writeMoviePath(_ id: Int, to target: UnsafeMutablePointer<UInt8>) -> Int {
        let prefix: StaticString = "/movie/"
        target.update(from: prefix.utf8Start, count: 7)
        var start = 7
        if id < 0 {
            target[start] = UInt8(ascii: "-")
            start += 1
        }
        // The magnitude as a `UInt`: `-Int.min` is not an `Int`.
        var digits = 1
        var rest = id.magnitude / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        var value = id.magnitude
        for position in stride(from: start + digits - 1, through: start, by: -1) {
            target[position] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: value % 10)
            value /= 10
        }
        return start + digits
    }

    /// Writes `path`'s bytes at `target`, which has room for `maxPathBytes`, and returns how
    /// many: a cache key is written with its path this way, without a `String` of the path.
    static func writePath(of route: Route, to target: UnsafeMutablePointer<UInt8>) -> Int {
        if case .movie(let id) = route { return writeMoviePath(id, to: target) }
        var path = route.path  // a literal: no allocation
        return path.withUTF8 { bytes in
            // A longer literal added one day must stop here, not write past the room.
            precondition(bytes.count <= maxPathBytes, "a route's path is longer than Route.maxPathBytes")
            target.update(from: bytes.baseAddress!, count: bytes.count)
            return bytes.count
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
    /// Returns `nil` for anything that is not exactly one of the routes.
    public init?(path: String) {
        var path = path
        guard let route = path.withUTF8({ Route.match($0) }) else { return nil }
        self = route
    }

    /// Matches a path relative to the API root given as its UTF-8 bytes (a server's path
    /// after its own prefix), with no String made. Package-only: apps match paths as `String`.
    package init?(pathBytes path: UnsafeBufferPointer<UInt8>) {
        guard let route = Route.match(path) else { return nil }
        self = route
    }

    /// The route a path's bytes name. Read byte by byte on every request: no split, no
    /// intermediate String, no grapheme breaking (which a `Character` split of the path
    /// pays on every byte).
    private static func match(_ path: UnsafeBufferPointer<UInt8>) -> Route? {
        if let rest = dropping("/trending/", from: path) {
            guard let slash = rest.firstIndex(of: UInt8(ascii: "/")),
                let media = mediaType(UnsafeBufferPointer(rebasing: rest[..<slash])),
                let window = timeWindow(UnsafeBufferPointer(rebasing: rest[(slash + 1)...]))
            else { return nil }
            return .trending(media, window)
        }
        if let rest = dropping("/movie/", from: path) {
            return positiveInteger(rest).map { .movie(id: $0) }
        }
        return equals(path, "/configuration") ? .configuration : nil
    }

    /// `bytes` after `prefix`, or `nil` if they do not start with it.
    private static func dropping(_ prefix: StaticString, from bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<
        UInt8
    >? {
        let count = prefix.utf8CodeUnitCount
        guard bytes.count >= count, same(bytes, prefix, count: count) else { return nil }
        return UnsafeBufferPointer(rebasing: bytes[count...])
    }

    /// The media type a segment names exactly (lower case, as amodb spells it).
    private static func mediaType(_ segment: UnsafeBufferPointer<UInt8>) -> MediaType? {
        if equals(segment, "movie") { return .movie }
        if equals(segment, "all") { return .all }
        if equals(segment, "tv") { return .tv }
        if equals(segment, "person") { return .person }
        return nil
    }

    /// The time window a segment names exactly.
    private static func timeWindow(_ segment: UnsafeBufferPointer<UInt8>) -> TimeWindow? {
        if equals(segment, "day") { return .day }
        if equals(segment, "week") { return .week }
        return nil
    }

    /// Whether the bytes are exactly `text`'s.
    private static func equals(_ bytes: UnsafeBufferPointer<UInt8>, _ text: StaticString) -> Bool {
        bytes.count == text.utf8CodeUnitCount && same(bytes, text, count: bytes.count)
    }

    /// Whether the first `count` bytes of `bytes` and `text` are the same (both have as many).
    private static func same(_ bytes: UnsafeBufferPointer<UInt8>, _ text: StaticString, count: Int) -> Bool {
        let literal = text.utf8Start
        for index in 0..<count where bytes[index] != literal[index] { return false }
        return true
    }

    /// Digits only (no sign, no leading zero), 1 … 2^31-1: ids are never anything else.
    static func positiveInteger(_ text: Substring) -> Int? {
        var text = text
        return text.withUTF8 { positiveInteger($0) }
    }

    /// `positiveInteger` on the bytes of the text.
    static func positiveInteger(_ digits: UnsafeBufferPointer<UInt8>) -> Int? {
        guard (1...10).contains(digits.count), digits[0] != UInt8(ascii: "0") else { return nil }
        var value = 0
        for byte in digits {
            let digit = byte &- UInt8(ascii: "0")
            guard digit <= 9 else { return nil }
            value = value * 10 + Int(digit)
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
