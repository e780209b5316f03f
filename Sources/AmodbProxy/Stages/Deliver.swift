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

    /// What delivering an answer needs of its request: a few values, not a copy of the request.
    struct Facts: Sendable {
        let method: String
        /// Whether the request is a `HEAD` (its answer's body bytes are not sent).
        let isHead: Bool
        let route: ProxyMetrics.RouteLabel
        /// The path as logged: only for a route that matched none (others are logged by route).
        let loggedPath: String?
        /// The cache key, logged for a valid forwarded request.
        let key: String?
        /// The caller's address, logged as `client`.
        let address: String
        /// Whether the answer gets its CORS fields: CORS applies, and it is no preflight
        /// (whose answer has its own).
        let decorates: Bool
        /// The request's `Origin`, read only when CORS applies.
        let origin: String?
        /// The verified user calling, if any (the access log's `user`).
        let user: UserIdentity?
        /// The proof of a genuine app the request carried, while proofs are checked (the access log's `proof`).
        let proof: Proof?
        let started: UInt64
        /// The event loop the answer is counted on, while it is given on that loop's queue.
        var loop: Int?

        init(
            _ request: borrowing HTTPRequest, head: HeadFacts, started: UInt64, loop: Int?, user: UserIdentity?,
            proof: Proof? = nil
        ) {
            method = request.method
            isHead = request.method == "HEAD"
            self.user = user
            self.proof = proof
            route = head.route
            loggedPath = head.loggedPath
            key = head.key?.text
            address = head.address
            decorates = head.corsApplies && request.method != "OPTIONS"
            origin = head.origin
            self.started = started
            self.loop = loop
        }
    }

    /// `answer` made into the response sent, counted and logged.
    func callAsFunction(_ answer: consuming ProxyAnswer, _ facts: Facts) -> HTTPResponse {
        let outcome = answer.cacheOutcome
        // Taken out of the answer, not copied: a copy would retain each of its buffers.
        var response = (consume answer).response
        if let outcome { outcome.appendCacheStatus(to: &response.renderedFields) }
        if facts.decorates, let cors {
            cors.decorate(&response, origin: facts.origin)
        }
        let nanoseconds = Clocks.uptimeNanoseconds() - facts.started
        let cache = ProxyMetrics.CacheLabel(outcome)
        metrics.recordRequest(
            route: facts.route, status: response.status, cache: cache, seconds: Double(nanoseconds) / 1e9,
            loop: facts.loop)
        let bytes = facts.isHead ? 0 : response.body.count
        let encoding = response.contentEncoding.flatMap(ContentCoding.init(contentEncoding:)) ?? .identity
        metrics.recordResponseBytes(bytes, encoding: encoding, loop: facts.loop)
        if let accessLog {
            accessLog.record(
                AccessLogEntry(
                    method: facts.method, route: facts.route, path: facts.loggedPath, key: facts.key,
                    status: response.status, cache: cache, nanoseconds: nanoseconds, bytes: bytes, encoding: encoding,
                    client: facts.address, user: facts.user.map { String($0.logName) },
                    detail: outcome?.missDetail?.literal, proof: facts.proof?.literal))
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
