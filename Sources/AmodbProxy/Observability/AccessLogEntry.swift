import AmodbCompression

/// What the access log says about one answered request, typed until it is written: the
/// route, cache outcome and content coding are labels from fixed sets, the duration is
/// integer nanoseconds.
struct AccessLogEntry: Sendable {
    /// The method token as sent, or `-` when the request was refused before it was read.
    var method: String
    var route: ProxyMetrics.RouteLabel
    /// The path as `LoggedPath` cuts it, only for a request no route names.
    var path: String?
    var status: Int
    var cache: ProxyMetrics.CacheLabel
    /// From the complete request head to the answer.
    var nanoseconds: UInt64
    /// Body bytes sent (0 for `HEAD`).
    var bytes: Int
    /// The coding of the body sent.
    var encoding: ContentCoding = .identity
    /// The client's address (the peer, or the trusted `X-Forwarded-For` hop).
    var client: String

    /// Most bytes the fields take: the method, path and client escaped byte by byte, and
    /// 512 for the rest (names, punctuation, the time, the labels and three numbers take
    /// under 300).
    var room: Int {
        512 + (method.utf8.count + (path?.utf8.count ?? 0) + client.utf8.count) * JSONText.maxBytesPerByte
    }

    /// Writes the fields, in the order every line has them.
    func write(to line: inout LogFields, time: inout LogTime) {
        line.time(&time)
        line.text("method", method)
        line.label("route", route.literal)
        if let path { line.text("path", path) }
        line.integer("status", status)
        line.label("cache", cache.literal)
        line.milliseconds("duration_ms", nanoseconds: nanoseconds)
        line.integer("bytes", bytes)
        line.label("encoding", encoding.literal)
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
