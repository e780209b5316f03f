/// One line per answered request on standard output: time, method, route template,
/// status, cache outcome, duration, body bytes, client address. Never the target as
/// sent (its query may hold someone's `api_key`), never a header.
struct AccessLog: Sendable {
    let format: LogFormat
    let sink: ProxyLogger.Sink
    let logger: ProxyLogger

    func record(method: String, route: String, status: Int, cache: String, seconds: Double, bytes: Int, client: String) {
        let line = format.line([
            ("time", .string(LogTime.now)), ("method", .string(method)), ("route", .string(route)),
            ("status", .integer(status)), ("cache", .string(cache)), ("duration_ms", .number(seconds * 1000)),
            ("bytes", .integer(bytes)), ("client", .string(client)),
        ])
        sink(logger.scrubbed(line))
    }
}
