import AmodbCompression
package import AmodbHTTP
import AmodbModels
import Synchronization

/// The one way through the proxy. Every request's answer comes from one driver running the
/// stages in order, each a function of the request's context that says what comes next:
///
/// 1. **Read** the head once into a `RequestContext`: the route (`RouteTable`, or the
///    proxy's own, `OwnRoute`), the canonical amodb request and its `CacheKey`, the caller's
///    address, `Accept-Encoding`, `If-None-Match`.
/// 2. **Admit** (`Admit`) returns the next `Action`: a preflight is answered (`.answer`);
///    a bad method, an unserved path, a caller refused (`IdentifyCaller`: app token, user,
///    proof) or over its rate, and a bad query are refused with an `APIRefusal`
///    (`.refuse`); the proxy's own pages are answered here (`.own`); anything else becomes
///    a `CacheQuery`: `.lookUp`.
/// 3. **Look up** (`lookUp`): the stored entry and the cache decision (`CacheDecision`, a
///    pure function of the entry, the time and the policy) say what comes next: a fresh
///    entry, or a stale one whose refresh backs off, is answered now; a stale one is
///    answered while one refresh runs (5); nothing usable is a fill (4).
/// 4. **Fill** (`fill`): the path's lease (`FetchLeases`: one fill per path, fleet-wide)
///    is joined, or led: the fill stage (`Fill`) calls amodb with the call the `KeyBudget`
///    grants, and the commit stage (`Commit`) stores the result and answers those who
///    joined. The answer comes later.
/// 5. **Revalidate** (`revalidate`): a stale answer now, and a background refresh when the
///    budget has a call for it.
/// 6. **Deliver** (`Deliver`): `Cache-Status`, CORS, the metrics and the access log, for an
///    answer given now or later.
///
/// A hit runs 1, 2, 3 and 6 on the event loop's queue, with no lock but the cache's and no
/// task; a miss that fills runs 4 in a task and delivers from there; a refusal ends at 2;
/// a signed-in request is a hit or a miss like any other once 2 has its user.
package final class ProxyDriver: HTTPResponder {
    /// The prefix apps put in their `baseURL`, as amodb's API root is `…/3`.
    static let apiPrefix = "/3"

    /// What a stage decides: the next step of a request's way.
    enum Action {
        /// Answer now.
        case answer(ProxyAnswer)
        /// Refuse now.
        case refuse(APIRefusal)
        /// One of the proxy's own pages (`OwnRoute`).
        case own(OwnRoute)
        /// Ask the cache the context's query: the look-up stage's decision (`CacheDecision`)
        /// is the next step.
        case lookUp
    }

    /// Which listener a request came in on: the public port, or the operator's own
    /// (`AMODB_OPERATOR_PORT`), which serves the operator's pages and the probes only.
    enum Door: Sendable {
        case api, operatorPages
    }

    /// Where the operator's pages are served, and their per-address limit.
    struct OperatorPages: Sendable {
        /// Whether they have a port of their own: the public port then answers them 404,
        /// and `/readyz` there says ready or not without the details.
        var ownPort = false
        /// Each address's requests for them (`/metrics` costs a few hundred microseconds of
        /// CPU; `/status.json` tells when the budget is spent): 120 a minute, 60 at once,
        /// beyond a scraper's and a status page's needs. Exempt addresses are not limited.
        var limiter = CallerRateLimiter(perMinute: 120, burst: 60, capacity: 4096)

        /// Whether `page` is served through `door`.
        func serves(_ page: OwnRoute, through door: Door) -> Bool {
            switch door {
            case .operatorPages: page.isOperatorPage || page == .healthz || page == .readyz
            case .api: !(ownPort && page.isOperatorPage)
            }
        }
    }

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
        /// The amodb routes served: any other is no route.
        let routes: ServedRoutes
        /// How a caller's address is counted (an IPv6 address by its prefix).
        let network: ClientNetwork
        /// Where the operator's pages are, and their limit.
        let operatorPages: OperatorPages

        init(
            callers: Callers, rateLimiter: CallerRateLimiter?, trustedProxies: TrustedProxies,
            rateLimitExempt: AddressSet, cors: CORSPolicy?, routes: ServedRoutes = .byDefault,
            network: ClientNetwork = ClientNetwork(), operatorPages: OperatorPages = OperatorPages()
        ) {
            self.callers = callers
            self.rateLimiter = rateLimiter
            self.trustedProxies = trustedProxies
            self.rateLimitExempt = rateLimitExempt
            self.cors = cors
            self.routes = routes
            self.network = network
            self.operatorPages = operatorPages
        }

        /// Anyone, from anywhere, unlimited: for a driver asked only through `run` (the
        /// planner's replay, tests of the cache stages).
        static func anyone(metrics: ProxyMetrics) -> Access {
            Access(
                callers: Callers(
                    tokens: AppTokens(
                        tokens: [], file: nil, amodbKey: Secret("-"), logger: ProxyLogger(sink: { _ in })),
                    users: nil, keySet: nil, rateLimiter: nil, metrics: metrics),
                rateLimiter: nil, trustedProxies: TrustedProxies(networks: []),
                rateLimitExempt: AddressSet(networks: []),
                cors: nil)
        }
    }

    /// The cache's stages and what they share.
    let stages: CacheStages
    private let access: Access
    /// The languages amodb translates: any other shares the `en-US` entry.
    private let languages: [String]
    private let metrics: ProxyMetrics
    private let deliver: Deliver
    /// The link to the Redis replicas share, for `/readyz`'s detail during an outage.
    private let redis: RedisLink?
    /// App Attest's exchange (`/attest/…`), when it is on.
    let attest: AttestService?
    /// Set once the server listens; `/readyz` says so.
    let listening = Atomic<Bool>(false)

    private let clock: any ProxyClock

    init(
        stages: CacheStages, access: Access? = nil, languages: [String] = AmodbLanguage.base,
        metrics: ProxyMetrics = ProxyMetrics(), accessLog: AccessLog? = nil, redis: RedisLink? = nil,
        attest: AttestService? = nil
    ) {
        self.stages = stages
        clock = stages.clock
        let access = access ?? .anyone(metrics: metrics)
        self.access = access
        self.languages = languages
        self.metrics = metrics
        self.deliver = Deliver(cors: access.cors, metrics: metrics, accessLog: accessLog)
        self.redis = redis
        self.attest = attest
    }

    // MARK: The way through

    /// Every request's answer: its context read (1), admitted (2), and the actions run (3–5),
    /// then delivered (6), now or later.
    package func respond(
        to request: borrowing HTTPRequest, context server: ResponderContext, later: () -> ResponseDelivery
    )
        -> HTTPResponse?
    {
        respond(to: request, through: .api, context: server, later: later)
    }

    /// A request's answer, as it came in through `door`.
    func respond(
        to request: borrowing HTTPRequest, through door: Door, context server: ResponderContext,
        later: () -> ResponseDelivery
    ) -> HTTPResponse? {
        var reading = RequestContext(
            request, access: access, languages: languages, started: Clocks.uptimeNanoseconds(),
            loop: server.loopIndex, door: door)
        let admitted = Admit.run(request, &reading, access: access, clock: clock)
        // Moved, not copied, into a constant: the delivery below captures it, and a variable
        // captured while it is also passed on would be copied for each.
        let context = consume reading
        // Bound straight from the call: an optional kept beside the unwrapped answer would
        // hold a second reference to its buffers, and delivering it appending a field would
        // then copy them.
        guard
            let answer = answer(
                to: admitted, request, context,
                later: { [deliver] in
                    let send = later()
                    // Delivered later, elsewhere than the loop's queue: counted in the shared lane.
                    var elsewhere = context
                    elsewhere.loop = nil
                    return { [deliver, elsewhere] answer in send(deliver(answer, elsewhere)) }
                })
        else { return nil }
        return deliver(consume answer, context)
    }

    /// The answer the admitted request's next action gives now, or `nil` when it comes later.
    private func answer(
        to admitted: consuming Action, _ request: borrowing HTTPRequest, _ context: RequestContext,
        later: () -> AnswerDelivery
    ) -> ProxyAnswer? {
        switch consume admitted {
        case .answer(let answer): return answer
        case .refuse(let refusal): return ProxyAnswer(refusal.response)
        case .own(let own): return answer(own: own, request, context, later: later)
        case .lookUp: return lookUp(context.query!, later: later)
        }
    }

    // MARK: 3. Look up

    /// The stored entry's answer as the cache decision has it: now (fresh, or stale while its
    /// refresh backs off), while it is refreshed (`revalidate`), or, with nothing usable, a
    /// fill (`fill`); `nil` when the answer goes to the delivery `later()` makes (made only
    /// then: a hit allocates none). Where an admitted request goes, and where the planner's
    /// replay and the cache's tests ask.
    func lookUp(_ query: CacheQuery, later: () -> AnswerDelivery) -> ProxyAnswer? {
        let now = clock.now()
        // The hit path: one lookup in the cache, no lease taken.
        if let entry = stages.cache.entry(for: query.key.text) {
            switch stored(entry, query, at: now, later: later) {
            case .now(let answer): return answer
            case .later: return nil
            case .unusable: break
            }
        }
        return fill(query, at: now, deliver: later())
    }

    /// What a stored entry answers.
    private enum Stored {
        /// A hit, or a stale copy: now.
        case now(ProxyAnswer)
        /// A stale copy, handed to the delivery once the budget has said whether it refreshes.
        case later
        /// Too old to answer.
        case unusable
    }

    /// The answer from a stored entry, as the cache decision has it.
    private func stored(_ entry: CachedResponse, _ query: CacheQuery, at now: Double, later: () -> AnswerDelivery)
        -> Stored
    {
        let backoff = stages.commit.backoff
        let key = query.key
        switch CacheDecision(
            entry, of: query.request.route, at: now, freshness: stages.policy.freshness,
            refreshFailure: { backoff.failure(for: key.text, now: now) })
        {
        case .fresh(let ttl):
            stages.statistics.count(entry.status == 200 ? .hit : .negativeHit, loop: query.loop)
            return .now(
                entry.answer(at: now, outcome: .hit(ttl: ttl), accept: query.accept, ifNoneMatch: query.ifNoneMatch))
        case .stale(let ttl, let fwdStatus):
            stages.statistics.count(.staleIfError)
            let outcome = CacheOutcome.stale(ttl: ttl, reason: .error, fwdStatus: fwdStatus)
            return .now(entry.answer(at: now, outcome: outcome, accept: query.accept, ifNoneMatch: query.ifNoneMatch))
        case .revalidate(let ttl, let overdue):
            guard let answer = revalidate(query, entry, ttl: ttl, overdue: overdue, at: now, later: later) else {
                return .later
            }
            return .now(answer)
        case .miss:
            return .unusable
        }
    }

    // MARK: 4. Fill

    /// A request that found nothing usable stored: it joins the fill in flight, or leads one
    /// (`nil`: `deliver` gets the answer later), or finds the answer stored after all.
    /// `counted`: the request was already counted as a miss (it asks again).
    private func fill(_ query: CacheQuery, at now: Double, deliver: @escaping AnswerDelivery, counted: Bool = false)
        -> ProxyAnswer?
    {
        let (stages, key) = (self.stages, query.key)
        let waiter: FetchWaiter = { [weak self] result in
            if case .failed(let failure) = result, failure.detail == .clientShareSpent, let self {
                self.askAgain(query, deliver: deliver)
                return
            }
            deliver(
                result.answer(
                    at: stages.clock.now(), collapsed: true, accept: query.accept, ifNoneMatch: query.ifNoneMatch))
        }
        let claim = stages.leases.claim(
            key.text,
            cached: {
                let entry = stages.cache.entry(for: key.text)
                return CacheDecision(entry, of: query.request.route, at: now, freshness: stages.policy.freshness) {
                    nil
                }.isUsable ? entry : nil
            },
            waiter: waiter)
        switch claim {
        case .cached(let entry):
            // Stored between the lookup and the claim: not a miss after all.
            switch stored(entry, query, at: now, later: { deliver }) {
            case .now(let answer): return answer
            case .later: return nil
            case .unusable:
                let outcome = CacheOutcome.hit(ttl: entry.remainingLifetime(at: now))
                return entry.answer(at: now, outcome: outcome, accept: query.accept, ifNoneMatch: query.ifNoneMatch)
            }
        case .joined:
            if !counted { stages.statistics.countMiss(key.text) }
            stages.statistics.count(.collapsed)
            return nil
        case .refused(let detail):
            if !counted { stages.statistics.countMiss(key.text) }
            return FetchFailure.noCall(detail, retryAfter: 1).answer(collapsed: false)
        case .leads:
            if !counted { stages.statistics.countMiss(key.text) }
            stages.tasks.run(.awaited) {
                // Another replica may have stored it, be fetching it, or have just failed to: then no call from here.
                if let shared = await stages.leases.lead(key.text, arrivedAt: now) {
                    let result = stages.commit.store(key, with: shared, refreshing: false)
                    deliver(
                        result.answer(
                            at: stages.clock.now(), collapsed: true, accept: query.accept,
                            ifNoneMatch: query.ifNoneMatch))
                    await stages.leases.share(key.text, nil)
                    return
                }
                let fetched = await stages.fill.run(query.request, priority: .miss, limitKey: query.limitKey)
                let result = stages.commit.store(key, with: fetched, refreshing: false)
                deliver(
                    result.answer(
                        at: stages.clock.now(), collapsed: false, accept: query.accept, ifNoneMatch: query.ifNoneMatch))
                // A refusal of this caller's share is its own: the other replicas waiting on
                // the path are told only that no call was made, and look again.
                let spentShare =
                    if case .failed(let failure) = fetched { failure.detail == .clientShareSpent } else { false }
                await stages.commit.share(key, spentShare ? nil : result)
            }
            return nil
        }
    }

    /// A request that joined a fill whose leader's own caller had no call left, so that the
    /// leader made none: the share spent is not this caller's, so it asks again, as itself,
    /// already counted as a miss. This ends: each time follows another leader's refusal.
    /// Not on an event loop's queue any more (no `loop`).
    private func askAgain(_ query: CacheQuery, deliver: @escaping AnswerDelivery) {
        var query = query
        query.loop = nil
        if let answer = fill(query, at: clock.now(), deliver: deliver, counted: true) {
            deliver(answer)
        }
    }

    // MARK: 5. Revalidate

    /// A stale answer, and a background refresh unless one runs or the budget has no call
    /// for it. A stale entry can still be answered, so its refresh waits for slack in the
    /// window, and the request that starts it gets its answer once the budget has decided
    /// (it may ask Redis: tens of ms at most; `nil`: handed to the delivery). An `overdue`
    /// one's refresh goes first, ahead of the misses waiting for a call, and its request is
    /// answered at once meanwhile. Every other request is answered at once.
    private func revalidate(
        _ query: CacheQuery, _ entry: CachedResponse, ttl: Int, overdue: Bool, at now: Double,
        later: () -> AnswerDelivery
    ) -> ProxyAnswer? {
        let (stages, key) = (self.stages, query.key)
        let revalidating = entry.answer(
            at: now, outcome: .stale(ttl: ttl, reason: .revalidate, fwdStatus: nil), accept: query.accept,
            ifNoneMatch: query.ifNoneMatch)
        guard case .leads = stages.leases.claim(key.text, cached: { nil }, waiter: nil) else {
            stages.statistics.count(.staleWhileRevalidate)
            return revalidating
        }
        let deliver = later()
        let started = stages.tasks.run(.background) {
            if overdue { deliver(revalidating) }
            let grant = await stages.budget.callForRefresh(overdue: overdue)
            guard grant.isGranted else {
                stages.commit.release(key) { .answer(entry, stored: false) }
                stages.statistics.count(.budgetDenial)
                stages.statistics.count(.staleForBudget)
                stages.statistics.count(.refreshDeferred, route: query.request.route)
                if !overdue {
                    let outcome = CacheOutcome.stale(ttl: ttl, reason: .budget, fwdStatus: nil)
                    deliver(
                        entry.answer(at: now, outcome: outcome, accept: query.accept, ifNoneMatch: query.ifNoneMatch))
                }
                return
            }
            stages.statistics.count(.refresh)
            stages.statistics.count(.staleWhileRevalidate)
            if !overdue { deliver(revalidating) }
            // Filled and committed, unless another replica refreshed it already, or failed to
            // (the call granted then goes unused).
            if let shared = await stages.leases.lead(key.text, arrivedAt: now) {
                stages.commit.store(key, with: shared, refreshing: true)
                await stages.leases.share(key.text, nil)
                return
            }
            let fetched = await stages.fill.run(query.request, priority: overdue ? .miss : .refresh, grant: grant)
            let result = stages.commit.store(key, with: fetched, refreshing: true)
            await stages.commit.share(key, result)
        }
        if started { return nil }
        stages.commit.release(key) { .answer(entry, stored: false) }
        stages.statistics.count(.staleWhileRevalidate)
        return revalidating
    }

    // MARK: The proxy's own pages

    /// The answer of one of the proxy's own routes: `/healthz`, `/readyz`, `/metrics`, the
    /// status page, and App Attest's exchange (checked off the event loop, answered later).
    private func answer(
        own: OwnRoute, _ request: borrowing HTTPRequest, _ context: RequestContext, later: () -> AnswerDelivery
    ) -> ProxyAnswer? {
        switch own {
        case .healthz:
            return ProxyAnswer(Self.plainJSON(200, #"{"status":"ok"}"#))
        case .readyz:
            // The details (the fleet, the budget, the key set) are the operator's: with a port
            // of their own, the public `/readyz` says ready or not, and why not, only.
            return ProxyAnswer(readiness(detailed: context.door == .operatorPages || !access.operatorPages.ownPort))
        case .metrics:
            var response = HTTPResponse(status: 200, body: Array(metrics.render().utf8))
            response.headers.set("Content-Type", PrometheusText.contentType)
            response.headers.set("Cache-Control", "no-store")
            return ProxyAnswer(response)
        case .status, .statusJSON:
            return ProxyAnswer(StatusPage.response(json: own == .statusJSON, metrics: metrics))
        case .attest:
            guard let attest, let endpoint = AttestService.Endpoint(path: request.path) else {
                return ProxyAnswer(
                    APIRefusal(
                        .attestation, status: 404,
                        "App Attest is not enabled on this proxy (AMODB_ATTEST_APPS names the apps it accepts)."
                    ).response)
            }
            let deliver = later()
            let (method, body, chunked) = (request.method, request.body ?? [], request.bodyWasChunked)
            let caller = context.caller
            Task {
                let response = await attest.respond(
                    to: endpoint, method: method, body: body, chunked: chunked, address: caller.networkKey,
                    limited: caller.limitedByAddress)
                deliver(ProxyAnswer(response))
            }
            return nil
        }
    }

    /// `/readyz`: ready, or not ready in amodb's error shape (as every refusal) with `status`
    /// and the details a probe or an operator reads beside it.
    private func readiness(detailed: Bool) -> HTTPResponse {
        func notReady(_ status: String, _ message: String, details: String = "") -> HTTPResponse {
            var refusal = APIRefusal(.notReady, message)
            refusal.members = #","status":"# + JSONText.quoted(status) + details
            return refusal.response
        }
        guard listening.load(ordering: .relaxed) else {
            return notReady("starting", "The proxy is starting; it is not listening yet.")
        }
        if stages.keyRejected {
            let message = "amodb rejects the proxy's key; see the error log"
            return notReady(message, message + ".")
        }
        let details =
            detailed ? access.callers.readinessDetail + (redis?.readinessDetail ?? "") + budgetDetail : ""
        if let reason = access.callers.notReadyReason {
            return notReady(reason, reason, details: details)
        }
        // Still ready while Redis is away or the fleet's window is paused (this replica
        // serves stored answers and spends its reserve), but the operator reading /readyz
        // learns why the fleet is not sharing.
        return Self.plainJSON(200, #"{"status":"ready""# + details + "}")
    }

    /// What `/readyz` adds while calls from the fleet's window are paused:
    /// `,"budget":"paused: <reason>, resuming in N s"`; nothing otherwise.
    private var budgetDetail: String {
        let now = clock.now()
        guard let pause = stages.budget.window.pause(now: now) else { return "" }
        let seconds = Int(max(0, pause.until - now).rounded(.up))
        return #","budget":"# + JSONText.quoted("paused: \(pause.reason.rawValue), resuming in \(seconds) s")
    }

    private static func plainJSON(_ status: Int, _ body: String) -> HTTPResponse {
        var response = HTTPResponse.json(status, Array(body.utf8))
        response.headers.set("Cache-Control", "no-store")
        return response
    }

    package func didRefuse(status: Int, peerAddress: String, head: ArraySlice<UInt8>) {
        deliver.refused(status: status, peerAddress: peerAddress, head: head)
    }
}

/// The operator's port's listener: the same driver, every request through the operator's door.
struct OperatorDoor: HTTPResponder {
    let driver: ProxyDriver

    func respond(to request: borrowing HTTPRequest, context: ResponderContext, later: () -> ResponseDelivery)
        -> HTTPResponse?
    {
        driver.respond(to: request, through: .operatorPages, context: context, later: later)
    }
}
