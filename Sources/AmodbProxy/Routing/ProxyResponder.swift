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
        let rateLimiter: CallerRateLimiter?
        let trustedProxies: TrustedProxies
        /// Client addresses not limited by address: a token from one is limited by the token alone.
        let rateLimitExempt: AddressSet
        let cors: CORSPolicy?

        init(
            callers: Callers, rateLimiter: CallerRateLimiter?, trustedProxies: TrustedProxies,
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
    private let deliver: Deliver
    private let clock: any ProxyClock
    /// The link to the Redis replicas share, for `/readyz`'s detail during an outage.
    private let redis: RedisLink?
    /// App Attest's exchange (`/attest/…`), when it is on.
    let attest: AttestService?
    /// Set once the server listens; `/readyz` says so.
    let listening = Atomic<Bool>(false)

    /// What `/readyz` adds while calls from the fleet's window are paused:
    /// `,"budget":"paused: <reason>, resuming in N s"`; nothing otherwise.
    private var budgetDetail: String {
        let now = clock.now()
        guard let pause = forwarder.budgetPause(now: now) else { return "" }
        let seconds = Int(max(0, pause.until - now).rounded(.up))
        return #","budget":"# + JSONText.quoted("paused: \(pause.reason.rawValue), resuming in \(seconds) s")
    }

    init(
        forwarder: CachingForwarder, languages: [String], access: Access, metrics: ProxyMetrics, accessLog: AccessLog?,
        clock: any ProxyClock, redis: RedisLink? = nil, attest: AttestService? = nil
    ) {
        self.redis = redis
        self.attest = attest
        self.forwarder = forwarder
        self.languages = languages
        self.access = access
        self.metrics = metrics
        self.deliver = Deliver(cors: access.cors, metrics: metrics, accessLog: accessLog)
        self.clock = clock
    }

    /// Every request's answer, through the stages in order: route and canonical request
    /// (`HeadFacts`), identify the caller (`IdentifyCaller`), the answer (`answer`: from the
    /// routes, the access rules and the cache stages, now or later), and deliver (`Deliver`:
    /// `Cache-Status`, CORS, metrics, the access log).
    func respond(to request: borrowing HTTPRequest, context: ResponderContext, later: () -> ResponseDelivery)
        -> HTTPResponse?
    {
        let started = Clocks.uptimeNanoseconds()
        let head = HeadFacts(request, access: access, languages: languages)
        let caller = IdentifyCaller.run(
            request, head: head, callers: access.callers, clock: clock, loop: context.loopIndex)
        let facts = Deliver.Facts(
            request, head: head, started: started, loop: context.loopIndex, user: caller.user, proof: caller.proof)
        // Bound straight from the call: an optional kept beside the unwrapped answer would
        // hold a second reference to its buffers, and delivering it appending a field would
        // then copy them.
        guard
            let immediate = answer(
                request, head: head, caller: caller, loop: context.loopIndex,
                later: { [deliver] in
                    let send = later()
                    // Delivered later, elsewhere than the loop's queue: counted in the shared lane.
                    var elsewhere = facts
                    elsewhere.loop = nil
                    return { [deliver, elsewhere] answer in send(deliver(answer, elsewhere)) }
                })
        else { return nil }
        return deliver(consume immediate, facts)
    }

    /// The answer to a request, at once, or `nil` and later, to the delivery `later()` makes.
    private func answer(
        _ request: borrowing HTTPRequest, head: HeadFacts, caller: IdentifyCaller.Outcome, loop: Int?,
        later: () -> AnswerDelivery
    ) -> ProxyAnswer? {
        if request.method == "OPTIONS", head.corsApplies, let cors = access.cors {
            let requested = request.headers.values("Access-Control-Request-Headers")
            return ProxyAnswer(
                cors.preflight(
                    origin: head.origin,
                    requestedHeaders: requested.count > 1 ? requested.joined(separator: ",") : requested.first))
        }
        if head.route == .attest {
            return attest(request, head: head, later: later)
        }
        guard request.method == "GET" || request.method == "HEAD" else {
            var headers = HTTPHeaders()
            headers.set("Allow", head.corsApplies ? "GET, HEAD, OPTIONS" : "GET, HEAD")
            return ProxyAnswer(
                APIRefusal(.methodNotAllowed, "Method \(request.method) is not allowed; use GET.", headers: headers)
                    .response)
        }
        switch head.route {
        case .healthz:
            return ProxyAnswer(Self.plainJSON(200, #"{"status":"ok"}"#))
        case .readyz:
            // Not ready: amodb's error shape, as every refusal, with `status` and the details
            // a probe or an operator reads beside it.
            func notReady(_ status: String, _ message: String, details: String = "") -> ProxyAnswer {
                var refusal = APIRefusal(.notReady, message)
                refusal.members = #","status":"# + JSONText.quoted(status) + details
                return ProxyAnswer(refusal.response)
            }
            guard listening.load(ordering: .relaxed) else {
                return notReady("starting", "The proxy is starting; it is not listening yet.")
            }
            if forwarder.keyRejected {
                let message = "amodb rejects the proxy's key; see the error log"
                return notReady(message, message + ".")
            }
            if let reason = access.callers.notReadyReason {
                return notReady(
                    reason, reason,
                    details: access.callers.readinessDetail + (redis?.readinessDetail ?? "") + budgetDetail)
            }
            // Still ready while Redis is away or the fleet's window is paused (this replica
            // serves stored answers and spends its reserve), but the operator reading /readyz
            // learns why the fleet is not sharing.
            return ProxyAnswer(
                Self.plainJSON(
                    200,
                    #"{"status":"ready""# + access.callers.readinessDetail + (redis?.readinessDetail ?? "")
                        + budgetDetail + "}"))
        case .metrics:
            var response = HTTPResponse(status: 200, body: Array(metrics.render().utf8))
            response.headers.set("Content-Type", PrometheusText.contentType)
            response.headers.set("Cache-Control", "no-store")
            return ProxyAnswer(response)
        case .status, .statusJSON:
            return ProxyAnswer(StatusPage.response(for: head.route, metrics: metrics))
        case .trending, .movie, .configuration, .unmatched, .invalid, .attest:
            break
        }
        guard head.underAPI else {
            return ProxyAnswer(APIRefusal.unserved(head.loggedPath ?? LoggedPath.of(target: request.target)).response)
        }
        // Refused, or within the caller's rate (`CallerIdentity.limitKey`: who a limit counts).
        let limitKey: String?
        switch caller {
        case .refused(let response): return ProxyAnswer(response)
        case .caller(let identity): limitKey = identity.limitKey
        }
        if let limitKey, let wait = access.rateLimiter?.take(limitKey, now: clock.now()) {
            return ProxyAnswer(
                APIRefusal.tooManyRequests({ "Too many requests from this client; try again in \($0) s." }, wait: wait)
                    .response)
        }
        switch head.amodbRequest {
        case nil:
            // A path under `/3` that names no forwarded route: within the caller's rate, like
            // any other, so that a flood of made-up paths is limited too.
            return ProxyAnswer(APIRefusal.unserved(head.loggedPath ?? LoggedPath.of(target: request.target)).response)
        case .failure(let error):
            return ProxyAnswer(APIRefusal(.invalidParameter, error.description).response)
        case .success(let amodbRequest):
            // Each client's share of the calls for misses follows the same exemption as its rate.
            return forwarder.respond(
                to: amodbRequest, key: head.key, ifNoneMatch: head.ifNoneMatch, accept: head.accept,
                client: limitKey,
                loop: loop,
                later: later)
        }
    }

    /// `/attest/…`: App Attest's exchange, checked off the event loop and answered later;
    /// `404` when App Attest is off.
    private func attest(_ request: borrowing HTTPRequest, head: HeadFacts, later: () -> AnswerDelivery)
        -> ProxyAnswer?
    {
        guard let attest, let endpoint = AttestService.Endpoint(path: request.path) else {
            return ProxyAnswer(
                APIRefusal(
                    .attestation, status: 404,
                    "App Attest is not enabled on this proxy (AMODB_ATTEST_APPS names the apps it accepts)."
                ).response)
        }
        let deliver = later()
        let (method, body, chunked) = (request.method, request.body ?? [], request.bodyWasChunked)
        let (address, limited) = (head.address, head.limitedByAddress)
        Task {
            let response = await attest.respond(
                to: endpoint, method: method, body: body, chunked: chunked, address: address, limited: limited)
            deliver(ProxyAnswer(response))
        }
        return nil
    }

    func didRefuse(status: Int, peerAddress: String, head: ArraySlice<UInt8>) {
        deliver.refused(status: status, peerAddress: peerAddress, head: head)
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
        case "/attest/challenge", "/attest/keys", "/attest/session": return .attest
        default: return .unmatched
        }
    }
}
