/// One line per answered request on standard output: time, method, route template,
/// status, cache outcome, duration, body bytes and their content coding, client address. Never the query (it
/// may hold someone's `api_key`), never a header. A request no route names
/// (`unmatched`, or `invalid` when refused before routing) also gets its `path`, as
/// `LoggedPath` cuts it, so an operator sees which paths apps ask for.
struct AccessLog: Sendable {
    let format: LogFormat
    let sink: ProxyLogger.Sink
    let logger: ProxyLogger

    func record(
        method: String, route: String, path: String? = nil, status: Int, cache: String, seconds: Double, bytes: Int,
        encoding: String = "identity", client: String
    ) {
        var fields: [(String, LogValue)] = [("time", .string(LogTime.now)), ("method", .string(method)), ("route", .string(route))]
        if let path { fields.append(("path", .string(path))) }
        fields += [
            ("status", .integer(status)), ("cache", .string(cache)), ("duration_ms", .number(seconds * 1000)),
            ("bytes", .integer(bytes)), ("encoding", .string(encoding)), ("client", .string(client)),
        ]
        sink(logger.scrubbed(format.line(fields)))
    }
}
