import AmodbCompression
import Glibc

/// What the access log says about one answered request, typed until it is written: the
/// route, cache outcome and content coding are labels from fixed sets, the duration is
/// integer nanoseconds.
///
/// Made with the memberwise initializer: with an explicit one, its `String?` fields made
/// the compiler build every entry in a temporary, copy it out and destroy the temporary
/// (a retain and a release of each string, per line; Swift 6.3, `-O`): docs/performance.md,
/// "Invariants", memberwise initializers. `maxLineBytes` is the line's bound (same section).
struct AccessLogEntry: Sendable {
    /// The method token as sent, or `-` when the request was refused before it was read.
    var method: String
    var route: ProxyMetrics.RouteLabel
    /// As `LoggedPath` cuts it, only for a request no route names.
    var path: String?
    /// The cache key (`CacheKey`), only for a valid forwarded request.
    var key: String?
    var status: Int
    var cache: ProxyMetrics.CacheLabel
    /// From the complete request head to the answer.
    var nanoseconds: UInt64
    /// Body bytes sent (0 for `HEAD`).
    var bytes: Int
    /// The coding of the body sent; for a 304, which sends none (`bytes` 0), the coding of
    /// the variant whose tag matched, so the log says which variant was revalidated.
    var encoding: ContentCoding = .identity
    /// The peer, or the trusted `X-Forwarded-For` hop.
    var client: String
    /// The verified user who called: a short keyed hash of the ID token's issuer and
    /// subject (`UserIdentity.logName`), never the subject; `nil` for anyone else.
    var user: String?
    /// Why a miss got no call (`Cache-Status`'s `detail`: a spent budget, a client's spent
    /// share, calls paused because Redis is unreachable or the fleet's budget was lost); `nil` otherwise.
    var detail: StaticString? = nil
    /// The proof of a genuine app the request carried (`attested`, `app_check`, `user`,
    /// `app_token`, `none`), while proofs are checked; `nil` otherwise.
    var proof: StaticString? = nil

    /// Most bytes the fields take: the method, path, key, client and user escaped byte by byte,
    /// and 512 for the rest (names, punctuation, the time, the labels and three numbers take under 300).
    var maxLineBytes: Int {
        let text =
            method.utf8.count + (path?.utf8.count ?? 0) + (key?.utf8.count ?? 0) + client.utf8.count
            + (user?.utf8.count ?? 0)
        return 512 + text * JSONText.maxBytesPerByte
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
    private func writeAfterTime(to line: inout LogFields) {
        if line.isJSON {
            writeJSONAfterTime(to: &line)
        } else {
            writeFieldByField(to: &line)
        }
    }

    /// The JSON fields after the time, their names, quotes and commas copied as literals:
    /// a line per request, always the same names in the same order, so none of that is
    /// worked out field by field. The bytes are exactly `writeFieldByField`'s in JSON (a
    /// test holds them to it).
    private func writeJSONAfterTime(to line: inout LogFields) {
        line.put(#","method":"#)
        line.put(quoting: method)
        line.put(#","route":""#)
        line.put(string: route.text)
        line.put(UInt8(ascii: "\""))
        if let path {
            line.put(#","path":"#)
            line.put(quoting: path)
        }
        if let key {
            line.put(#","key":"#)
            line.put(quoting: key)
        }
        line.put(#","status":"#)
        line.put(integer: status)
        line.put(#","cache":""#)
        line.put(cache.literal)
        line.put(#"","duration_ms":"#)
        line.put(milliseconds: nanoseconds)
        line.put(#","bytes":"#)
        line.put(integer: bytes)
        line.put(#","encoding":""#)
        line.put(encoding.literal)
        line.put(#"","client":"#)
        line.put(quoting: client)
        if let user {
            line.put(#","user":"#)
            line.put(quoting: user)
        }
        if let detail {
            line.put(#","detail":""#)
            line.put(detail)
            line.put(UInt8(ascii: "\""))
        }
        if let proof {
            line.put(#","proof":""#)
            line.put(proof)
            line.put(UInt8(ascii: "\""))
        }
    }

    /// Writes every field after the time one at a time, in either format.
    func writeFieldByField(to line: inout LogFields) {
        line.text("method", method)
        line.label("route", route.text)
        if let path { line.text("path", path) }
        if let key { line.text("key", key) }
        line.integer("status", status)
        line.label("cache", cache.literal)
        line.milliseconds("duration_ms", nanoseconds: nanoseconds)
        line.integer("bytes", bytes)
        line.label("encoding", encoding.literal)
        line.text("client", client)
        if let user { line.text("user", user) }
        if let detail { line.label("detail", detail) }
        if let proof { line.label("proof", proof) }
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
