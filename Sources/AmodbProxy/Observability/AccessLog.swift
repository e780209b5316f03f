/// One line per answered request on standard output: time, method, route template,
/// status, cache outcome, duration, body bytes and their content coding, client address. Never the query (it
/// may hold someone's `api_key`), never a header. A request no route names
/// (`unmatched`, or `invalid` when refused before routing) also gets its `path`, as
/// `LoggedPath` cuts it, so an operator sees which paths apps ask for.
///
/// A line is written as bytes straight into the standard-output writer's buffer (one
/// short lock, no string). Of its fields only the method and the path carry text a client
/// chose, so only they pass the logger's scrubber: the key (or a client token) sent as a
/// path or a method is written `<redacted>`. The client address is the peer's, or an
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
        if case .fields(let method, let route, let path, let client) = entry.request {
            entry.request = .fields(method: logger.scrubbed(method), route: route, path: path.map(logger.scrubbed), client: client)
        }
        guard let sink else {
            writer.write { pending, time in
                LogLine.write(format, room: entry.room, into: &pending) { entry.write(to: &$0, time: &time) }
            }
            return
        }
        var time = LogTime()
        var bytes: [UInt8] = []
        LogLine.write(format, room: entry.room, into: &bytes) { entry.write(to: &$0, time: &time) }
        sink(String(decoding: bytes, as: UTF8.self))
    }

    /// The fields of a line that come from a request's head (method, route, path; client),
    /// rendered once, as `record` would write them: a head's repeats copy them (`HeadFacts`).
    /// A class: an answer's bookkeeping passes it along as one reference.
    final class RequestFields: Sendable {
        /// Method, route and path, each with its separator.
        let lead: [UInt8]
        /// The client, with its separator.
        let client: [UInt8]

        fileprivate init(lead: [UInt8], client: [UInt8]) {
            self.lead = lead
            self.client = client
        }
    }

    /// The request's fields of a line, scrubbed and rendered in this log's format.
    func requestFields(method: String, route: ProxyMetrics.RouteLabel, path: String?, client: String) -> RequestFields {
        let method = logger.scrubbed(method)
        let path = path.map(logger.scrubbed)
        let lead = LogLine.fragment(format, room: 512 + (method.utf8.count + (path?.utf8.count ?? 0)) * JSONText.maxBytesPerByte) {
            AccessLogEntry.writeLead(method: method, route: route, path: path, to: &$0)
        }
        let client = LogLine.fragment(format, room: 64 + client.utf8.count * JSONText.maxBytesPerByte) {
            AccessLogEntry.writeClient(client, to: &$0)
        }
        return RequestFields(lead: lead, client: client)
    }
}
