import AmodbCompression
import AmodbHTTP
import AmodbModels
import Synchronization

/// The proxy's routes: `/healthz`, `/readyz`, `/metrics`, `/status`, and under `/3` exactly the
/// forwarded amodb routes, behind client tokens or users' ID tokens, a per-client rate
/// limit and CORS.
/// Anything else is answered here and never reaches amodb. Every answer is counted
/// in the metrics and written to the access log.
final class ProxyResponder: HTTPResponder {
    /// The prefix apps put in their `baseURL`, as amodb's API root is `…/3`.
    static let apiPrefix = "/3"

    /// What guards the API routes. A class: every request reads it, through one reference
    /// (a struct of these would be copied, a retain of each, where a call site needs its own).
    final class Access: Sendable {
        /// Who may call: app tokens, users' ID tokens, or anyone.
        let callers: Callers
        let rateLimiter: ClientRateLimiter?
        let trustedProxies: TrustedProxies
        /// Client addresses not limited by address: a token from one is limited by the token alone.
        let rateLimitExempt: AddressSet
        let cors: CORSPolicy?

        init(
            callers: Callers, rateLimiter: ClientRateLimiter?, trustedProxies: TrustedProxies,
            rateLimitExempt: AddressSet,
            cors: CORSPolicy?
        ) {
            self.callers = callers
            self.rateLimiter = rateLimiter
            self.trustedProxies = trustedProxies
            self.rateLimitExempt = rateLimitExempt
            self.cors = cors
        }
    }

    private let forwarder: CachingForwarder
    /// The languages amodb translates: any other shares the `en-US` entry.
    private let languages: [String]
    private let access: Access
    private let metrics: ProxyMetrics
    private let accessLog: AccessLog?
    private let clock: any ProxyClock
    /// The link to the Redis replicas share, for `/readyz`'s detail during an outage.
    private let redis: RedisLink?
    /// Set once the server listens; `/readyz` says so.
    let listening = Atomic<Bool>(false)

    init(
        forwarder: CachingForwarder, languages: [String], access: Access, metrics: ProxyMetrics, accessLog: AccessLog?,
        clock: any ProxyClock, redis: RedisLink? = nil
    ) {
        self.redis = redis
        self.forwarder = forwarder
        self.languages = languages
        self.access = access
        self.metrics = metrics
        self.accessLog = accessLog
        self.clock = clock
    }

    /// Every request's answer, in three steps: what its head says (`HeadFacts`), the answer
    /// (`answer`: from the routes, the access rules and the cache, now or later), and its
    /// completion (`complete`: `Cache-Status`, CORS, metrics, the access log).
    func respond(to request: borrowing HTTPRequest, context: ResponderContext, later: () -> ResponseDelivery)
        -> HTTPResponse?
    {
        let started = Clocks.uptimeNanoseconds()
        let head = HeadFacts(request, access: access, languages: languages)
        // Who is calling, read before answering so that the log line of an answer given
        // later names the user too: only for what can reach amodb (a GET or HEAD under `/3`).
        let caller =
            access.callers.isEnabled && head.underAPI && (request.method == "GET" || request.method == "HEAD")
            ? access.callers.identify(
                request.headers["Authorization"], query: request.query,
                client: Callers.Client(address: head.client, limited: head.limitedByAddress), clock: clock,
                loop: context.loopIndex) : .open
        let completion = Completion(request, head: head, started: started, loop: context.loopIndex, user: caller.user)
        // Bound straight from the call: an optional kept beside the unwrapped answer would
        // hold a second reference to its buffers, and `complete` appending a field would
        // then copy them.
        guard
            let immediate = answer(
                request, head: head, caller: caller, loop: context.loopIndex,
                later: { [self] in
                    let deliver = later()
                    // Delivered later, elsewhere than the loop's queue: counted in the shared lane.
                    var elsewhere = completion
                    elsewhere.loop = nil
                    return { [self, elsewhere] answer in deliver(complete(answer, elsewhere)) }
                })
        else { return nil }
        return complete(consume immediate, completion)
    }

    /// What completing an answer needs of its request: a few values, not a copy of the request.
    private struct Completion: Sendable {
        let method: String
        /// Whether the request is a `HEAD` (its answer's body bytes are not sent).
        let isHead: Bool
        let route: ProxyMetrics.RouteLabel
        /// The path as logged: only for a route that matched none (others are logged by route).
        let loggedPath: String?
        /// The cache key, logged for a valid forwarded request.
        let key: String?
        let client: String
        /// Whether the answer gets its CORS fields: CORS applies, and it is no preflight
        /// (whose answer has its own).
        let decorates: Bool
        /// The request's `Origin`, read only when CORS applies.
        let origin: String?
        /// The verified user calling, if any (the access log's `user`).
        let user: UserIdentity?
        let started: UInt64
        /// The event loop the answer is counted on, while it is given on that loop's queue.
        var loop: Int?

        init(_ request: borrowing HTTPRequest, head: HeadFacts, started: UInt64, loop: Int?, user: UserIdentity?) {
            method = request.method
            isHead = request.method == "HEAD"
            self.user = user
            route = head.route
            loggedPath = head.loggedPath
            key = head.key
            client = head.client
            decorates = head.corsApplies && request.method != "OPTIONS"
            origin = head.origin
            self.started = started
            self.loop = loop
        }
    }

    /// The last step of every answer, immediate or delivered later: the typed outcome becomes
    /// `Cache-Status` text here, once (RFC 9211), answers get their CORS fields (errors too:
    /// a page reads a 404 or a 429 only with them), and the answer is counted and logged.
    private func complete(_ answer: consuming ProxyAnswer, _ completion: Completion) -> HTTPResponse {
        let outcome = answer.cacheOutcome
        // Taken out of the answer, not copied: a copy would retain each of its buffers.
        var response = (consume answer).response
        if let outcome { outcome.appendCacheStatus(to: &response.renderedFields) }
        if completion.decorates, let cors = access.cors {
            cors.decorate(&response, origin: completion.origin)
        }
        let nanoseconds = Clocks.uptimeNanoseconds() - completion.started
        let cache = ProxyMetrics.CacheLabel(outcome)
        metrics.recordRequest(
            route: completion.route, status: response.status, cache: cache, seconds: Double(nanoseconds) / 1e9,
            loop: completion.loop)
        let bytes = completion.isHead ? 0 : response.body.count
        let encoding = response.contentEncoding.flatMap(ContentCoding.init(contentEncoding:)) ?? .identity
        metrics.recordResponseBytes(bytes, encoding: encoding, loop: completion.loop)
        if let accessLog {
            accessLog.record(
                AccessLogEntry(
                    method: completion.method, route: completion.route, path: completion.loggedPath,
                    key: completion.key, status: response.status, cache: cache, nanoseconds: nanoseconds, bytes: bytes,
                    encoding: encoding, client: completion.client, user: completion.user.map { String($0.logName) }))
        }
        // Moved out: a plain `return` copied the response (a retain of each buffer) and
        // destroyed the local after.
        return consume response
    }

    /// The answer to a request, at once, or `nil` and later, to the delivery `later()` makes.
    private func answer(
        _ request: borrowing HTTPRequest, head: HeadFacts, caller: Callers.Verdict, loop: Int?,
        later: () -> AnswerDelivery
    ) -> ProxyAnswer? {
        if request.method == "OPTIONS", head.corsApplies, let cors = access.cors {
            let requested = request.headers.values("Access-Control-Request-Headers")
            return ProxyAnswer(
                cors.preflight(
                    origin: head.origin,
                    requestedHeaders: requested.count > 1 ? requested.joined(separator: ",") : requested.first))
        }
        guard request.method == "GET" || request.method == "HEAD" else {
            var headers = HTTPHeaders()
            headers.set("Allow", head.corsApplies ? "GET, HEAD, OPTIONS" : "GET, HEAD")
            return ProxyAnswer(.error(405, "Method \(request.method) is not allowed; use GET.", headers: headers))
        }
        switch head.route {
        case .healthz:
            return ProxyAnswer(Self.plainJSON(200, #"{"status":"ok"}"#))
        case .readyz:
            guard listening.load(ordering: .relaxed) else {
                return ProxyAnswer(Self.plainJSON(503, #"{"status":"starting"}"#))
            }
            if forwarder.keyRejected {
                return ProxyAnswer(
                    Self.plainJSON(503, #"{"status":"amodb rejects the proxy's key; see the error log"}"#))
            }
            if let reason = access.callers.notReadyReason {
                return ProxyAnswer(
                    Self.plainJSON(
                        503,
                        #"{"status":"# + JSONText.quoted(reason) + access.callers.readinessDetail
                            + (redis?.readinessDetail ?? "") + "}"))
            }
            // Still ready while Redis is away (this replica serves within its share), but the
            // operator reading /readyz learns why the fleet is not sharing.
            return ProxyAnswer(
                Self.plainJSON(
                    200,
                    #"{"status":"ready""# + access.callers.readinessDetail + (redis?.readinessDetail ?? "") + "}"))
        case .metrics:
            var response = HTTPResponse(status: 200, body: Array(metrics.render().utf8))
            response.headers.set("Content-Type", PrometheusText.contentType)
            response.headers.set("Cache-Control", "no-store")
            return ProxyAnswer(response)
        case .status, .statusJSON:
            return ProxyAnswer(StatusPage.response(for: head.route, metrics: metrics))
        case .trending, .movie, .configuration, .unmatched, .invalid:
            break
        }
        guard head.underAPI else {
            return ProxyAnswer(.unserved(head.loggedPath ?? LoggedPath.of(target: request.target)))
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
        case .refused(let response): return ProxyAnswer(response)
        case .user(let user): identity = user.limitKey
        case .token(let token): identity = head.limitedByAddress ? token + "@" + head.client : token
        case .open: identity = head.limitedByAddress ? "address:" + head.client : nil
        }
        if let identity, let wait = access.rateLimiter?.take(identity, now: clock.now()) {
            var headers = HTTPHeaders()
            let seconds = wait.checkedInt(.up, clampedTo: 1...86_400) ?? 1
            headers.set("Retry-After", String(seconds))
            return ProxyAnswer(
                .error(429, "Too many requests from this client; try again in \(seconds) s.", headers: headers))
        }
        switch head.amodbRequest {
        case nil:
            // A path under `/3` that names no forwarded route: within the caller's rate, like
            // any other, so that a flood of made-up paths is limited too.
            return ProxyAnswer(.unserved(head.loggedPath ?? LoggedPath.of(target: request.target)))
        case .failure(let error):
            return ProxyAnswer(.error(400, error.description))
        case .success(let amodbRequest):
            // Each client's share of the calls for misses follows the same exemption as its rate.
            return forwarder.respond(
                to: amodbRequest, key: head.key, ifNoneMatch: head.ifNoneMatch, accept: head.accept, client: identity,
                loop: loop,
                later: later)
        }
    }

    func didRefuse(status: Int, peerAddress: String, head: ArraySlice<UInt8>) {
        metrics.recordRequest(route: .invalid, status: status, cache: .none, seconds: 0)
        accessLog?.record(
            AccessLogEntry(
                method: "-", route: .invalid, path: LoggedPath.of(requestHead: head), status: status, cache: .none,
                nanoseconds: 0, bytes: 0,
                client: peerAddress))
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
        case "/status": return .status
        case "/status.json": return .statusJSON
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
