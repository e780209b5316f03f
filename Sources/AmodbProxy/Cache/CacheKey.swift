import AmodbHTTP
import AmodbModels

/// The key an amodb request is cached under: its path and canonical query relative to the
/// API root (`/movie/550?append_to_response=credits&language=de-DE`), the same text as
/// `AmodbRequest.pathAndQuery`. The one place keys are made and read back: the cache, the
/// fleet's Redis keys, the snapshot file and the access log's `key` all hold this text, and
/// a stored key is turned back into its request only by `request(of:)`.
struct CacheKey: Sendable, Hashable {
    /// The key's text.
    let text: String

    /// The key of `request`. Written once into one string, each byte once (no `String` of
    /// the path and no appends): this runs on every request, hit or not. A request without
    /// parameters is its route's path, a literal for every route but a movie's.
    init(_ request: AmodbRequest) {
        if request.appendToResponse.isEmpty, request.language == nil, request.page == nil {
            text = Self.path(of: request.route)
        } else {
            text = Self.text(of: request)
        }
    }

    /// The request a key's text stands for, if the text is a key the proxy makes: read as a
    /// request's path and query are read (`RouteRequest`), then written again and compared,
    /// as a snapshot file or Redis may hold anything.
    static func request(of text: String) -> AmodbRequest? {
        let question = text.utf8.firstIndex(of: UInt8(ascii: "?"))
        guard let route = RouteRequest.route(pathBytes: text[..<(question ?? text.endIndex)].utf8.span),
            let query = question.map({ RequestQuery(text[text.index(after: $0)...]) }) ?? RequestQuery(),
            let request = try? RouteRequest.request(route, query: query, languages: nil).get(),
            CacheKey(request).text == text
        else { return nil }
        return request
    }

    /// A route's path: `Route.path`, a literal for every route but a movie's, whose path is
    /// written here (an `Int`'s description and an interpolation cost more than the rest of
    /// the key).
    static func path(of route: Route) -> String {
        guard case .movie(let id) = route else { return route.path }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: maxMoviePathBytes) { buffer in
            let count = writeMoviePath(id, to: buffer.baseAddress!)
            return String(decoding: UnsafeBufferPointer(rebasing: buffer[..<count]), as: UTF8.self)
        }
    }

    /// Most bytes a path takes: a movie's, at most `maxMoviePathBytes`; every other path is
    /// a literal of at most 21 bytes (`/trending/person/week`).
    static let maxPathBytes = maxMoviePathBytes
    /// Most bytes `/movie/<id>` takes: the prefix, a sign and the digits of `Int.min`.
    static let maxMoviePathBytes = 7 + 20

    /// Writes `/movie/<id>` at `target`, which has room for `maxMoviePathBytes`, and returns
    /// how many bytes it wrote: an `Int`'s description and a concatenation cost more than the
    /// rest of the key. A negative id (only code makes one: the reader refuses a sign) gets its `-`.
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

    /// Writes a route's path at `target`, which has room for `maxPathBytes`, and returns how
    /// many bytes: a key with parameters is written with its path this way.
    static func writePath(of route: Route, to target: UnsafeMutablePointer<UInt8>) -> Int {
        if case .movie(let id) = route { return writeMoviePath(id, to: target) }
        var path = route.path  // a literal: no allocation
        return path.withUTF8 { bytes in
            // A longer literal added one day must stop here, not write past the room.
            precondition(bytes.count <= maxPathBytes, "a route's path is longer than CacheKey.maxPathBytes")
            target.update(from: bytes.baseAddress!, count: bytes.count)
            return bytes.count
        }
    }

    /// The key of a request with parameters, in `queryItems`' order (sorted by name). The
    /// path may take less than the room counted for it (`maxPathBytes`).
    private static func text(of request: AmodbRequest) -> String {
        let appended = request.appendToResponse
        let language = request.language
        let pageText = request.page.map { String($0) }
        var count = maxPathBytes
        if !appended.isEmpty {
            count += 1 + QueryParameter.appendToResponse.rawValue.utf8.count + 1 + appended.count - 1
            for name in appended { count += name.utf8.count }
        }
        if let language { count += 1 + QueryParameter.language.rawValue.utf8.count + 1 + language.utf8.count }
        if let pageText { count += 1 + QueryParameter.page.rawValue.utf8.count + 1 + pageText.utf8.count }
        return String(unsafeUninitializedCapacity: count) { buffer in
            guard let start = buffer.baseAddress else { return 0 }
            var next = start + writePath(of: request.route, to: start)
            let end = start + buffer.count
            var separator = UInt8(ascii: "?")
            func put(_ byte: UInt8) {
                precondition(next < end, "a cache key is longer than the room counted for it")
                next.initialize(to: byte)
                next += 1
            }
            func put(_ text: String) {
                var text = text
                text.withUTF8 { bytes in
                    guard let base = bytes.baseAddress else { return }
                    precondition(end - next >= bytes.count, "a cache key is longer than the room counted for it")
                    next.initialize(from: base, count: bytes.count)
                    next += bytes.count
                }
            }
            func parameter(_ name: QueryParameter) {
                put(separator)
                separator = UInt8(ascii: "&")
                put(name.rawValue)
                put(UInt8(ascii: "="))
            }
            if !appended.isEmpty {
                parameter(.appendToResponse)
                for (index, name) in appended.enumerated() {
                    if index > 0 { put(UInt8(ascii: ",")) }
                    put(name)
                }
            }
            if let language {
                parameter(.language)
                put(language)
            }
            if let pageText {
                parameter(.page)
                put(pageText)
            }
            return next - start
        }
    }
}
