package import AmodbModels
import Glibc

/// The access log's line for one forwarded request answered at a given time, written by
/// the code that writes the server's own lines (`AccessLogEntry`), so a log the planner
/// reads back can be made without a server: synthetic traces, tests.
package enum AccessLogLine {
    /// How the cache answered, as the line's `cache` field says.
    package enum Cache: Sendable {
        case hit, miss, stale
    }

    /// Appends the line for `request` answered at `time` (seconds since 1970, written to the
    /// millisecond), and a newline, to `bytes`.
    package static func appendForwarded(
        _ request: AmodbRequest, at time: Double, cache: Cache = .hit, status: Int = 200, milliseconds: Double = 0,
        bytes size: Int = 0,
        format: LogFormat = .json, client: String = "192.0.2.1", to bytes: inout [UInt8]
    ) {
        let cacheLabel: ProxyMetrics.CacheLabel =
            switch cache {
            case .hit: .hit
            case .miss: .miss
            case .stale: .stale
            }
        let entry = AccessLogEntry(
            method: "GET", route: ProxyMetrics.RouteLabel(request.route),
            key: CacheKey(request).text,
            status: status, cache: cacheLabel, nanoseconds: UInt64(max(0, milliseconds * 1e6).rounded()), bytes: size,
            client: client)
        // Rounded to the millisecond first: the writer cuts the nanoseconds it is given, and
        // `…123.0` seconds may be `…122.99999` in binary.
        let millis = Int((time * 1000).rounded())
        let second = millis >= 0 ? millis / 1000 : (millis - 999) / 1000
        let moment = timespec(tv_sec: second, tv_nsec: (millis - second * 1000) * 1_000_000)
        var clock = LogTime()
        LogLine.write(format, maxBytes: entry.maxLineBytes, into: &bytes) {
            entry.write(to: &$0, time: &clock, at: moment)
        }
        bytes.append(UInt8(ascii: "\n"))
    }

    /// The line for `request` answered at `time`, without its newline.
    package static func forwarded(
        _ request: AmodbRequest, at time: Double, cache: Cache = .hit, status: Int = 200, milliseconds: Double = 0,
        bytes size: Int = 0,
        format: LogFormat = .json, client: String = "192.0.2.1"
    ) -> String {
        var bytes: [UInt8] = []
        appendForwarded(
            request, at: time, cache: cache, status: status, milliseconds: milliseconds, bytes: size, format: format,
            client: client,
            to: &bytes)
        return String(decoding: bytes.dropLast(), as: UTF8.self)
    }
}
