/// One line per answered request on standard output: time, method, route template,
/// status, cache outcome, duration, body bytes, client address. Never the target as
/// sent (its query may hold someone's `api_key`), never a header.
struct AccessLog: Sendable {
    let format: LogFormat
    let sink: ProxyLogger.Sink
    let logger: ProxyLogger

    func record(method: String, route: String, status: Int, cache: String, seconds: Double, bytes: Int, client: String) {
        let milliseconds = (seconds * 1_000_000).rounded() / 1000
        let line: String
        switch format {
        case .json:
            // Written directly: this runs once per request, on the hit path too.
            var json = "{\"time\":\""
            json.reserveCapacity(192)
            json += LogTime.now
            json += "\",\"method\":"
            json += JSONText.quoted(method)
            json += ",\"route\":\""
            json += route   // one of the fixed templates: nothing to escape
            json += "\",\"status\":"
            json += String(status)
            json += ",\"cache\":\""
            json += cache
            json += "\",\"duration_ms\":"
            json += String(milliseconds)
            json += ",\"bytes\":"
            json += String(bytes)
            json += ",\"client\":\""
            json += client   // an IP address literal
            json += "\"}"
            line = json
        case .text:
            line = format.line([
                ("time", .string(LogTime.now)), ("method", .string(method)), ("route", .string(route)),
                ("status", .integer(status)), ("cache", .string(cache)), ("duration_ms", .number(milliseconds)),
                ("bytes", .integer(bytes)), ("client", .string(client)),
            ])
        }
        sink(logger.scrubbed(line))
    }
}
