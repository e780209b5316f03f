import AmodbCompression
import AmodbHTTP

/// The deliver stage: the last step of every answer, immediate or delivered later. The
/// typed outcome becomes `Cache-Status` text here, once (RFC 9211); answers get their CORS
/// fields (errors too: a page reads a 404 or a 429 only with them); the answer is counted
/// in the metrics and written to the access log. A class: every answer reads it, through
/// one reference.
final class Deliver: Sendable {
    private let cors: CORSPolicy?
    private let metrics: ProxyMetrics
    private let accessLog: AccessLog?

    init(cors: CORSPolicy?, metrics: ProxyMetrics, accessLog: AccessLog?) {
        self.cors = cors
        self.metrics = metrics
        self.accessLog = accessLog
    }

    /// `answer` made into the response sent, counted and logged.
    func callAsFunction(_ answer: consuming ProxyAnswer, _ context: RequestContext) -> HTTPResponse {
        let outcome = answer.cacheOutcome
        // Taken out of the answer, not copied: a copy would retain each of its buffers.
        var response = (consume answer).response
        if let outcome { outcome.appendCacheStatus(to: &response.renderedFields) }
        if context.decorates, let cors {
            cors.decorate(&response, origin: context.origin)
        }
        let nanoseconds = Clocks.uptimeNanoseconds() - context.started
        let cache = ProxyMetrics.CacheLabel(outcome)
        metrics.recordRequest(
            route: context.label, status: response.status, cache: cache, seconds: Double(nanoseconds) / 1e9,
            loop: context.loop)
        let bytes = context.isHead ? 0 : response.body.count
        let encoding = response.contentEncoding.flatMap(ContentCoding.init(contentEncoding:)) ?? .identity
        metrics.recordResponseBytes(bytes, encoding: encoding, loop: context.loop)
        if let accessLog {
            accessLog.record(
                AccessLogEntry(
                    method: context.method, route: context.label, path: context.loggedPath,
                    key: context.query?.key.text,
                    status: response.status, cache: cache, nanoseconds: nanoseconds, bytes: bytes, encoding: encoding,
                    client: context.caller.address, user: context.caller.user.map { String($0.logName) },
                    detail: outcome?.missDetail?.literal, proof: context.caller.proof?.literal))
        }
        // Moved out: a plain `return` copied the response (a retain of each buffer) and
        // destroyed the local after.
        return consume response
    }

    /// A request the server refused before it reached a responder (its head unreadable or
    /// too large), counted and logged as the route `invalid`.
    func refused(status: Int, peerAddress: String, head: ArraySlice<UInt8>) {
        metrics.recordRequest(route: .invalid, status: status, cache: .none, seconds: 0)
        accessLog?.record(
            AccessLogEntry(
                method: "-", route: .invalid, path: LoggedPath.of(requestHead: head), status: status, cache: .none,
                nanoseconds: 0, bytes: 0,
                client: peerAddress))
    }
}
