import AmodbCompression
import AmodbHTTP
import AmodbModels
import Synchronization

/// The proxy's routes: `/healthz`, `/readyz`, `/metrics`, and under `/3` exactly the
/// forwarded amodb routes, behind client tokens or users' ID tokens, a per-client rate
/// limit and CORS.
/// Anything else is answered here and never reaches amodb. Every answer is counted
/// in the metrics and written to the access log.
final class ProxyResponder: HTTPResponder {
    /// The prefix apps put in their `baseURL`, as amodb's API root is `…/3`.
    static let apiPrefix = "/3"

    /// What guards the API routes.
    struct Access: Sendable {
        /// Who may call: app tokens, users' ID tokens, or anyone.
        var callers: Callers
        var rateLimiter: ClientRateLimiter?
        var trustedProxies: TrustedProxies
        /// Client addresses not limited by address: a token from one is limited by the token alone.
        var rateLimitExempt: AddressSet
        var cors: CORSPolicy?
    }

    private let forwarder: CachingForwarder
    /// The languages amodb translates: any other shares the `en-US` entry.
    private let languages: [String]
    private let access: Access
    private let metrics: ProxyMetrics
    private let accessLog: AccessLog?
    private let clock: any ProxyClock
    /// Set once the server listens; `/readyz` says so.
    let listening = Atomic<Bool>(false)

    init(forwarder: CachingForwarder, languages: [String], access: Access, metrics: ProxyMetrics, accessLog: AccessLog?, clock: any ProxyClock) {
        self.forwarder = forwarder
        self.languages = languages
        self.access = access
        self.metrics = metrics
        self.accessLog = accessLog
        self.clock = clock
    }

    func respond(to request: borrowing HTTPRequest, later: () -> ResponseDelivery) -> HTTPResponse? {
        let started = Clocks.uptimeNanoseconds()
        let head = headFacts(request)
        // Who is calling, read before answering so that the log line of an answer given
        // later names the user too: only for what can reach amodb (a GET or HEAD under `/3`).
        let caller = head.underAPI && (request.method == "GET" || request.method == "HEAD")
            ? access.callers.identify(request.headers["Authorization"], clock: clock, loop: request.loopIndex) : .open
        // The delivery of a later answer captures what finishing needs, not the request: it
        // is made only for an answer given later. (A closure passed as it is written stays on
        // the stack; one stored in a local first would be allocated for every request.)
        let finishing = Finishing(request, head: head, started: started, user: caller.user)
        // The closure reaches `finishing` through a pointer: capturing it would copy it into
        // every function the closure is specialized into (three copies a hit), and it is
        // copied only into a later delivery, which needs its own.
        var immediate = withUnsafePointer(to: finishing) { finishingPointer in
            answer(request, head: head, caller: caller) { [self] in
                let deliver = later()
                // Delivered later, elsewhere than the loop's queue: counted in the shared lane.
                var elsewhere = finishingPointer.pointee
                elsewhere.loop = nil
                let finishing = elsewhere
                return { [self] response in
                    var response = response
                    finish(&response, finishing)
                    deliver(response)
                }
            }
        }
        // Finished in place in its optional: unwrapping it into a variable would copy it.
        if case .some = immediate { finish(&immediate!, finishing) }
        return consume immediate
    }

    /// What finishing an answer needs of its request: a few values, not a copy of the request.
    private struct Finishing: Sendable {
        /// Whether the request is a `HEAD` (its answer's body bytes are not sent).
        let isHead: Bool
        let route: ProxyMetrics.RouteLabel
        /// The request's `Origin`, read only when CORS applies to the route.
        let origin: String?
        /// The access-log line's fields from the request, rendered once per head.
        let logFields: AccessLog.RequestFields?
        /// The verified user calling, if any (the access log's `user`).
        let user: UserIdentity?
        let started: UInt64
        /// The event loop the answer is counted on, while it is given on that loop's queue.
        var loop: Int?

        init(_ request: borrowing HTTPRequest, head: HeadFacts, started: UInt64, user: UserIdentity?) {
            isHead = request.method == "HEAD"
            self.user = user
            route = head.route
            origin = head.origin
            logFields = head.logFields
            self.started = started
            loop = request.loopIndex
        }
    }

    /// The last step of every answer, immediate or delivered later: the typed outcome becomes
    /// `Cache-Status` text here, once (RFC 9211), API answers get their CORS fields, and the
    /// answer is counted and logged.
    private func finish(_ response: inout HTTPResponse, _ finishing: Finishing) {
        if let outcome = response.cacheOutcome { outcome.appendCacheStatus(to: &response.renderedFields) }
        if finishing.route.isForwarded, let cors = access.cors {
            cors.decorate(&response, origin: finishing.origin)
        }
        record(response, finishing)
    }

    private func answer(
        _ request: borrowing HTTPRequest, head: HeadFacts, caller: Callers.Verdict, later: () -> ResponseDelivery
    ) -> HTTPResponse? {
        if request.method == "OPTIONS", let cors = access.cors, head.underAPI {
            return cors.preflight(origin: request.headers["Origin"])
        }
        guard request.method == "GET" || request.method == "HEAD" else {
            var headers = HTTPHeaders()
            headers.set("Allow", access.cors == nil ? "GET, HEAD" : "GET, HEAD, OPTIONS")
            return .error(405, "Method \(request.method) is not allowed; use GET.", headers: headers)
        }
        switch head.route {
        case .healthz:
            return Self.plainJSON(200, #"{"status":"ok"}"#)
        case .readyz:
            guard listening.load(ordering: .relaxed) else { return Self.plainJSON(503, #"{"status":"starting"}"#) }
            if forwarder.keyRejected {
                return Self.plainJSON(503, #"{"status":"amodb rejects the proxy's key; see the error log"}"#)
            }
            if let reason = access.callers.notReadyReason {
                return Self.plainJSON(503, #"{"status":"# + JSONText.quoted(reason) + "}")
            }
            return Self.plainJSON(200, #"{"status":"ready"}"#)
        case .metrics:
            var response = HTTPResponse(status: 200, body: Array(metrics.render().utf8))
            response.headers.set("Content-Type", PrometheusText.contentType)
            response.headers.set("Cache-Control", "no-store")
            return response
        case .trending, .movie, .configuration, .unmatched, .invalid:
            break
        }
        guard head.underAPI else {
            return .error(404, "The resource you requested could not be found.")
        }
        // Who is calling (`Callers`: an app token or a user's verified ID token, when
        // required), then within their rate. Who a limit counts: the user, not the app every
        // user shares a token with. A verified user is their own key, from any address, and
        // two users behind one address (a carrier's NAT) are two. With app tokens, the token
        // and the client's address; from an exempt address (loopback by default: a sidecar
        // or a local reverse proxy speaks for many users from one address), the token alone.
        // Without either, the address, and exempt addresses not at all. The identity is
        // built only for those a limit counts.
        let identity: String?
        switch caller {
        case .refused(let response): return response
        case .user(let user): identity = user.limitKey
        case .token(let token): identity = head.limitedByAddress ? token + "@" + head.client : token
        case .open: identity = head.limitedByAddress ? "address:" + head.client : nil
        }
        if let identity, let wait = access.rateLimiter?.take(identity, now: clock.now()) {
            var headers = HTTPHeaders()
            let seconds = wait.checkedInt(.up, clampedTo: 1...86_400) ?? 1
            headers.set("Retry-After", String(seconds))
            return .error(429, "Too many requests from this client; try again in \(seconds) s.", headers: headers)
        }
        switch head.amodbRequest {
        case nil:
            return .error(404, "The resource you requested could not be found.")
        case .failure(let error):
            return .error(400, error.description)
        case .success(let amodbRequest):
            // Each client's share of the calls for misses follows the same exemption as its rate.
            return forwarder.respond(
                to: amodbRequest, ifNoneMatch: head.ifNoneMatch, accept: head.accept, client: identity, loop: request.loopIndex,
                later: later)
        }
    }

    /// What this proxy reads from a request's head (`HeadFacts`): read once per head on a
    /// connection, and kept in its memo for the requests that repeat it byte for byte.
    private func headFacts(_ request: borrowing HTTPRequest) -> HeadFacts {
        if let kept = request.headMemo?.value as? HeadFacts { return kept }
        let facts = HeadFacts(request, access: access, languages: languages, accessLog: accessLog)
        request.headMemo?.keep(facts)
        return facts
    }

    func didRefuse(status: Int, peerAddress: String, head: ArraySlice<UInt8>) {
        metrics.recordRequest(route: .invalid, status: status, cache: .none, seconds: 0)
        accessLog?.record(AccessLogEntry(
            method: "-", route: .invalid, path: LoggedPath.of(requestHead: head), status: status, cache: .none, nanoseconds: 0, bytes: 0,
            client: peerAddress))
    }

    private func record(_ response: HTTPResponse, _ finishing: Finishing) {
        let nanoseconds = Clocks.uptimeNanoseconds() - finishing.started
        let cache = ProxyMetrics.CacheLabel(response.cacheOutcome)
        metrics.recordRequest(
            route: finishing.route, status: response.status, cache: cache, seconds: Double(nanoseconds) / 1e9, loop: finishing.loop)
        let bytes = finishing.isHead ? 0 : response.body.count
        let encoding = response.contentEncoding.flatMap(ContentCoding.init(contentEncoding:)) ?? .identity
        metrics.recordResponseBytes(bytes, encoding: encoding, loop: finishing.loop)
        if let accessLog, let logFields = finishing.logFields {
            accessLog.record(AccessLogEntry(
                request: .rendered(logFields), status: response.status, cache: cache, nanoseconds: nanoseconds, bytes: bytes,
                encoding: encoding, user: finishing.user.map { String($0.logName) }))
        }
    }

    private static func plainJSON(_ status: Int, _ body: String) -> HTTPResponse {
        var response = HTTPResponse.json(status, Array(body.utf8))
        response.headers.set("Cache-Control", "no-store")
        return response
    }

    /// The metrics label of a path (and the forwarded route it names, if any).
    static func routeLabel(for path: String, route: Route?) -> ProxyMetrics.RouteLabel {
        if let route { return ProxyMetrics.RouteLabel(route) }
        switch path {
        case "/healthz": return .healthz
        case "/readyz": return .readyz
        case "/metrics": return .metrics
        default: return .unmatched
        }
    }

    /// Whether a path is under the API root (`/3/…`), and the forwarded route it names
    /// there, if any: both read from the path's bytes in place.
    static func route(for path: String) -> (underAPI: Bool, route: Route?) {
        var path = path
        return path.withUTF8 { bytes in
            guard bytes.starts(with: apiRoot) else { return (false, nil) }
            return (true, Route(pathBytes: UnsafeBufferPointer(rebasing: bytes[apiPrefix.utf8.count...])))
        }
    }

    /// `/3/`: what every path under the API root starts with.
    private static let apiRoot = Array((apiPrefix + "/").utf8)
}
