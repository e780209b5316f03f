/// One line per answered request on standard output: time, method, route template,
/// status, cache outcome, duration, body bytes and their content coding, client address. Never the query (it
/// may hold someone's `api_key`), never a header. A request no route names
/// (`unmatched`, or `invalid` when refused before routing) also gets its `path`, as
/// `LoggedPath` cuts it, so an operator sees which paths apps ask for. A valid request
/// for a forwarded route gets its `key`: the canonical path and query the cache stores it
/// under (`/movie/550?language=de-DE`), built from the parameters the proxy knows and
/// normalized, so none of the client's own query text reaches the line; the planner
/// (`amodb-proxy plan`) replays a log by these keys.
///
/// A line is written as bytes straight into the standard-output writer's buffer (one
/// short lock, no string). Of its fields the method and the path carry text a client
/// chose, so they pass the logger's scrubber, and so does the key, whose language tag a
/// client chose within a tag's shape: the key (or a client token) sent as a path or a
/// method is written `<redacted>`. The client address is the peer's, or an
/// `X-Forwarded-For` hop that parsed as an IP address; everything else is a number or a
/// label from a fixed set.
///
/// A class: the responder records through one reference, where copying a struct of a
/// format, a closure, a logger and a writer cost a retain and a release of each per line.
final class AccessLog: Sendable {
    let format: LogFormat
    /// Where lines go: `nil` for `writer`, written in place; tests capture lines.
    let sink: ProxyLogger.Sink?
    let logger: ProxyLogger
    /// The writer lines go to when there is no `sink`.
    let writer: LineWriter

    /// An access log in `format` that scrubs with `logger`'s secrets, to `sink` if given,
    /// else to `writer`.
    init(format: LogFormat, sink: ProxyLogger.Sink?, logger: ProxyLogger, writer: LineWriter = .standardOutput) {
        self.format = format
        self.sink = sink
        self.logger = logger
        self.writer = writer
    }

    /// Writes the line of one answered request.
    func record(_ entry: consuming AccessLogEntry) {
        entry.method = logger.scrubbed(entry.method)
        entry.path = entry.path.map(logger.scrubbed)
        entry.key = entry.key.map(logger.scrubbed)
        guard let sink else {
            writer.write { pending, time in
                LogLine.write(format, maxBytes: entry.maxLineBytes, into: &pending) {
                    entry.write(to: &$0, time: &time)
                }
            }
            return
        }
        var time = LogTime()
        var bytes: [UInt8] = []
        LogLine.write(format, maxBytes: entry.maxLineBytes, into: &bytes) { entry.write(to: &$0, time: &time) }
        sink(String(decoding: bytes, as: UTF8.self))
    }
}
