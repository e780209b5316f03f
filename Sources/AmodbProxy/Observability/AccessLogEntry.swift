import AmodbCompression
import Glibc

/// What the access log says about one answered request, typed until it is written: the
/// route, cache outcome and content coding are labels from fixed sets, the duration is
/// integer nanoseconds.
struct AccessLogEntry: Sendable {
    /// The fields that come from the request: as values, or rendered once per head.
    var request: Request
    var status: Int
    var cache: ProxyMetrics.CacheLabel
    /// From the complete request head to the answer.
    var nanoseconds: UInt64
    /// Body bytes sent (0 for `HEAD`).
    var bytes: Int
    /// The coding of the body sent; for a 304, which sends none (`bytes` 0), the coding of
    /// the variant whose tag matched, so the log says which variant was revalidated.
    var encoding: ContentCoding = .identity
    /// The verified user who called: a short keyed hash of the ID token's issuer and
    /// subject (`UserIdentity.logName`), never the subject; `nil` for anyone else.
    var user: String?

    /// The fields of a line that come from the request's head.
    enum Request: Sendable {
        /// `method`: the token as sent, or `-` when the request was refused before it was
        /// read; `path`: as `LoggedPath` cuts it, only for a request no route names; `key`:
        /// the cache key (`AmodbRequest.pathAndQuery`), only for a valid forwarded request;
        /// `client`: the peer, or the trusted `X-Forwarded-For` hop.
        case fields(method: String, route: ProxyMetrics.RouteLabel, path: String?, key: String?, client: String)
        /// The same, rendered and scrubbed once (`AccessLog.requestFields`).
        case rendered(AccessLog.RequestFields)
    }

    init(
        method: String, route: ProxyMetrics.RouteLabel, path: String? = nil, key: String? = nil, status: Int, cache: ProxyMetrics.CacheLabel,
        nanoseconds: UInt64, bytes: Int, encoding: ContentCoding = .identity, client: String
    ) {
        self.init(
            request: .fields(method: method, route: route, path: path, key: key, client: client), status: status, cache: cache,
            nanoseconds: nanoseconds, bytes: bytes, encoding: encoding)
    }

    init(
        request: Request, status: Int, cache: ProxyMetrics.CacheLabel, nanoseconds: UInt64, bytes: Int, encoding: ContentCoding,
        user: String? = nil
    ) {
        self.request = request
        self.user = user
        self.status = status
        self.cache = cache
        self.nanoseconds = nanoseconds
        self.bytes = bytes
        self.encoding = encoding
    }

    /// Most bytes the fields take: the method, path, key, client and user escaped byte by
    /// byte (or as rendered), and 512 for the rest (names, punctuation, the time, the labels and three
    /// numbers take under 300).
    var room: Int {
        let user = (user?.utf8.count ?? 0) * JSONText.maxBytesPerByte
        return user + requestRoom
    }

    private var requestRoom: Int {
        switch request {
        case .fields(let method, _, let path, let key, let client):
            512 + (method.utf8.count + (path?.utf8.count ?? 0) + (key?.utf8.count ?? 0) + client.utf8.count) * JSONText.maxBytesPerByte
        case .rendered(let fields):
            512 + fields.lead.count + fields.client.count
        }
    }

    /// Writes the fields, in the order every line has them, the time now first.
    func write(to line: inout LogFields, time: inout LogTime) {
        line.time(&time)
        writeAfterTime(to: &line)
    }

    /// Writes the fields for a moment past (`AccessLogLine`), its time first.
    func write(to line: inout LogFields, time: inout LogTime, at moment: timespec) {
        line.time(&time, at: moment)
        writeAfterTime(to: &line)
    }

    /// Writes every field after the time.
    @inline(__always)
    private func writeAfterTime(to line: inout LogFields) {
        switch request {
        case .fields(let method, let route, let path, let key, _): Self.writeLead(method: method, route: route, path: path, key: key, to: &line)
        case .rendered(let fields): fields.lead.withUnsafeBufferPointer { line.put($0) }
        }
        line.integer("status", status)
        line.label("cache", cache.literal)
        line.milliseconds("duration_ms", nanoseconds: nanoseconds)
        line.integer("bytes", bytes)
        line.label("encoding", encoding.literal)
        switch request {
        case .fields(_, _, _, _, let client): Self.writeClient(client, to: &line)
        case .rendered(let fields): fields.client.withUnsafeBufferPointer { line.put($0) }
        }
        if let user { line.text("user", user) }
    }

    /// The request's fields before the answer's: method, route, and path or key if any.
    static func writeLead(method: String, route: ProxyMetrics.RouteLabel, path: String?, key: String?, to line: inout LogFields) {
        line.text("method", method)
        line.label("route", route.literal)
        if let path { line.text("path", path) }
        if let key { line.text("key", key) }
    }

    /// The request's field after the answer's: the client.
    static func writeClient(_ client: String, to line: inout LogFields) {
        line.text("client", client)
    }
}

extension ContentCoding {
    /// The coding's name as the access log copies it, without building a string.
    var literal: StaticString {
        switch self {
        case .identity: "identity"
        case .gzip: "gzip"
        case .br: "br"
        }
    }
}
