import AmodbCompression
import AmodbHTTP
import AmodbModels
import Synchronization

/// Answers forwarded routes so that amodb's budget is never wasted and clients never
/// wait once a path has been filled:
/// - fresh entry: answered at once (`hit`);
/// - stale entry younger than max-stale: answered at once while one background refresh
///   runs (stale-while-revalidate), or while amodb keeps failing (stale-if-error);
/// - nothing usable: one upstream call however many clients ask (`FetchCoalescer`), granted
///   by the `KeyBudget` with one of the leading client's share; amodb's 404 is kept
///   briefly (negative caching).
///
/// Every call to amodb is granted by `budget` and its answer told back to it: the forwarder
/// decides what to fetch, never whether the key may afford it.
///
/// Its parts: the coalescer and its leases, the answer table (`UpstreamAnswerTable`), the
/// back-off table (`RefreshBackoff`), the tracked tasks (`BackgroundTasks`), the key probe
/// (`KeyProbe`) and conditional requests (`ConditionalRequest`). Each answer carries a typed
/// `CacheOutcome`.
final class CachingForwarder: Sendable {
    /// Lifetimes, retries, back-off and the bounds of the forwarder's tables. What an
    /// operator can set comes from `ProxyConfiguration`, where its default is written.
    struct Policy: Sendable {
        /// Each route's lifetime, and how old its answers may be served stale (`Freshness`).
        var freshness: Freshness
        /// Lifetime of a remembered 404, in seconds (0: not remembered).
        var negativeTTL: Double
        /// Retries after amodb's 429, at most.
        var maxRateLimitRetries = 2
        /// The longest `Retry-After` the proxy waits out, in seconds; a longer one is passed on.
        var retryAfterCap: Double
        /// After a failed refresh, the stale copy is served without new attempts this long, in seconds.
        var refreshBackoff: Double = 10
        /// Seconds a miss waits for a call once the window is spent, before its 503 (0: none).
        var missWait: Double
        /// Misses waiting for a call at once, at most; beyond, a miss is refused at once.
        var maxWaitingMisses = 256
        /// Seconds between probes of a refused key, chosen at random in this range.
        var keyProbeInterval: ClosedRange<Double> = 30...60
        /// Paths fetched at once, at most.
        var maxFetchesInFlight = 1024
        /// Paths remembered with a failed refresh, at most.
        var maxBackoffEntries = 10_000

        /// The policy `configuration` asks for.
        init(_ configuration: ProxyConfiguration) {
            freshness = Freshness(configuration)
            negativeTTL = configuration.negativeTTL
            retryAfterCap = configuration.retryAfterCap
            missWait = configuration.missWait
        }
    }

    private let cache: any ResponseCache
    private let fetcher: any UpstreamFetcher
    /// Grants every call to amodb, and hears every answer that bears on the key's limit.
    private let budget: KeyBudget
    private let clock: any ProxyClock
    private let logger: ProxyLogger
    private let policy: Policy
    private let validator: AnswerValidator
    let statistics: CacheStatistics
    private let coalescer: FetchCoalescer
    private let backoff: RefreshBackoff
    private let tasks: BackgroundTasks
    private let keyProbe: KeyProbe
    /// Cleared once shutdown has written (or is about to write) the final snapshot.
    private let storesOpen = Mutex(true)
    /// Compresses each stored answer once, off the event loops.
    let variantMaker = VariantMaker()

    /// Whether amodb rejected the key (401) or the plan (402) on its last say.
    var keyRejected: Bool { keyProbe.keyRejected }

    /// A forwarder storing in `cache`, calling `fetcher` within the window `budget`.
    init(
        cache: any ResponseCache, fetcher: any UpstreamFetcher, budget: any CallBudget, clock: any ProxyClock,
        logger: ProxyLogger, policy: Policy, validator: AnswerValidator, statistics: CacheStatistics,
        leases: (any FetchLeases)? = nil
    ) {
        self.cache = cache
        self.fetcher = fetcher
        self.clock = clock
        self.logger = logger
        self.policy = policy
        self.validator = validator
        self.statistics = statistics
        self.tasks = BackgroundTasks(clock: clock)
        self.budget = KeyBudget(
            window: budget, missWait: policy.missWait, queueCapacity: policy.maxWaitingMisses, clock: clock,
            tasks: tasks)
        self.coalescer = FetchCoalescer(leases: leases ?? MemoryFetchLeases(capacity: policy.maxFetchesInFlight))
        self.backoff = RefreshBackoff(capacity: policy.maxBackoffEntries)
        self.keyProbe = KeyProbe(tasks: tasks, interval: policy.keyProbeInterval)
    }

    /// The answer for `request`: at once from the cache, else `nil` and, later, to the
    /// delivery `later()` makes (made only then: a hit allocates none).
    /// `client` names who asks (a token or an address) for its share of the calls; `nil`: no share applies.
    /// `key`: `request.pathAndQuery`, when the caller has made it already.
    /// `loop`: the event loop whose queue this runs on, if any (`ResponderContext.loopIndex`),
    /// where a hit is counted.
    func respond(
        to request: AmodbRequest, key: String? = nil, ifNoneMatch: String?, accept: AcceptEncoding = AcceptEncoding(),
        client: String?,
        loop: Int? = nil, later: () -> AnswerDelivery
    ) -> ProxyAnswer? {
        let key = key ?? request.pathAndQuery
        let now = clock.now()
        // The hit path: one lookup in the cache, no lease taken.
        if let entry = cache.entry(for: key) {
            switch stored(
                entry, for: request, key: key, now: now, accept: accept, ifNoneMatch: ifNoneMatch, loop: loop,
                later: later)
            {
            case .now(let answer): return answer
            case .later: return nil
            case .unusable: break
            }
        }
        return fetch(
            request, key: key, now: now, accept: accept, ifNoneMatch: ifNoneMatch, client: client, loop: loop,
            deliver: later())
    }

    /// The answer for a request that found nothing usable stored: it joins the fetch in
    /// flight, or leads one (`nil`: `deliver` gets the answer later), or finds the answer
    /// stored after all. `counted`: the request was already counted as a miss (it asks again).
    private func fetch(
        _ request: AmodbRequest, key: String, now: Double, accept: AcceptEncoding, ifNoneMatch: String?,
        client: String?,
        loop: Int?, deliver: @escaping AnswerDelivery, counted: Bool = false
    ) -> ProxyAnswer? {
        let waiter: FetchWaiter = { [weak self, clock] result in
            // The leader's own client had no call left, and the leader made none: the share
            // spent is not this client's, so it asks again, as itself. This ends: each time
            // follows another leader's refusal. Not on an event loop's queue any more (`loop`).
            if case .failed(let failure) = result, failure.detail == .clientShareSpent, let self {
                if let answer = self.fetch(
                    request, key: key, now: clock.now(), accept: accept, ifNoneMatch: ifNoneMatch, client: client,
                    loop: nil,
                    deliver: deliver, counted: true
                ) {
                    deliver(answer)
                }
                return
            }
            deliver(result.response(at: clock.now(), collapsed: true, accept: accept, ifNoneMatch: ifNoneMatch))
        }
        let claim = coalescer.claim(
            key, cached: { cache.entry(for: key).flatMap { usable($0, route: request.route, now: now) } },
            waiter: waiter)
        switch claim {
        case .cached(let entry):
            // Stored between the lookup and the claim: not a miss after all.
            switch stored(
                entry, for: request, key: key, now: now, accept: accept, ifNoneMatch: ifNoneMatch, loop: loop,
                later: { deliver }
            ) {
            case .now(let answer): return answer
            case .later: return nil
            case .unusable:
                let outcome = CacheOutcome.hit(ttl: entry.remainingLifetime(at: now))
                return entry.response(at: now, outcome: outcome, accept: accept, ifNoneMatch: ifNoneMatch)
            }
        case .joined:
            if !counted { statistics.countMiss(key) }
            statistics.count(.collapsed)
            return nil
        case .refused(let detail):
            if !counted { statistics.countMiss(key) }
            return ClientFailure.noCall(detail, retryAfter: 1).response(collapsed: false)
        case .leads:
            if !counted { statistics.countMiss(key) }
            tasks.run(.awaited) {
                // Another replica may have stored it, be fetching it, or have just failed to: then no call from here.
                if let shared = await self.coalescer.lead(key, arrivedAt: now) {
                    let result = self.finish(key, with: shared, refreshing: false)
                    deliver(
                        result.response(at: self.clock.now(), collapsed: true, accept: accept, ifNoneMatch: ifNoneMatch)
                    )
                    await self.coalescer.share(key, nil)
                    return
                }
                let fetched = await self.fill(request, priority: .miss, client: client)
                let result = self.finish(key, with: fetched, refreshing: false)
                deliver(
                    result.response(at: self.clock.now(), collapsed: false, accept: accept, ifNoneMatch: ifNoneMatch))
                // A refusal of this client's share is its own: the other replicas waiting on
                // the path are told only that no call was made, and look again.
                let spentShare =
                    if case .failed(let failure) = fetched { failure.detail == .clientShareSpent } else { false }
                await self.share(key, spentShare ? nil : result)
            }
            return nil
        }
    }

    /// `entry` if it can answer at `now`: fresh, or a stale 200 within its route's max-stale.
    private func usable(_ entry: CachedResponse, route: Route, now: Double) -> CachedResponse? {
        entry.isFresh(at: now)
            || (entry.status == 200 && now - entry.storedAt < policy.freshness.oldestStale(of: route)) ? entry : nil
    }

    /// What a stored entry answers.
    private enum StoredAnswer {
        /// A hit, or a stale copy: now.
        case now(ProxyAnswer)
        /// A stale copy, handed to `deliver` once the budget has said whether it refreshes.
        case later
        /// Too old to answer.
        case unusable
    }

    /// The answer from a stored entry (a hit, or a stale copy).
    private func stored(
        _ entry: CachedResponse, for request: AmodbRequest, key: String, now: Double, accept: AcceptEncoding,
        ifNoneMatch: String?, loop: Int?, later: () -> AnswerDelivery
    ) -> StoredAnswer {
        if entry.isFresh(at: now) {
            statistics.count(entry.status == 200 ? .hit : .negativeHit, loop: loop)
            let outcome = CacheOutcome.hit(ttl: entry.remainingLifetime(at: now))
            return .now(entry.response(at: now, outcome: outcome, accept: accept, ifNoneMatch: ifNoneMatch))
        }
        guard usable(entry, route: request.route, now: now) != nil else { return .unusable }
        return serveStale(
            entry, for: request, key: key, now: now, accept: accept, ifNoneMatch: ifNoneMatch, later: later)
    }

    /// A stale answer, and a background refresh unless one runs, amodb just failed
    /// (stale-if-error) or the budget has no call for it. The request that starts the
    /// refresh gets its answer once the budget has decided (it may ask Redis: tens of ms at
    /// most); every other one at once.
    private func serveStale(
        _ entry: CachedResponse, for request: AmodbRequest, key: String, now: Double, accept: AcceptEncoding,
        ifNoneMatch: String?, later: () -> AnswerDelivery
    ) -> StoredAnswer {
        let ttl = entry.remainingLifetime(at: now)
        if let failure = backoff.failure(for: key, now: now) {
            statistics.count(.staleIfError)
            let outcome = CacheOutcome.stale(ttl: ttl, reason: .error, fwdStatus: failure.fwdStatus)
            return .now(entry.response(at: now, outcome: outcome, accept: accept, ifNoneMatch: ifNoneMatch))
        }
        let revalidating = entry.response(
            at: now, outcome: .stale(ttl: ttl, reason: .revalidate, fwdStatus: nil), accept: accept,
            ifNoneMatch: ifNoneMatch)
        guard case .leads = coalescer.claim(key, cached: { nil }, waiter: nil) else {
            statistics.count(.staleWhileRevalidate)
            return .now(revalidating)
        }
        let deliver = later()
        // A stale entry can still be answered, so its refresh waits for slack in the window.
        // Past twice its lifetime it goes first, ahead of the misses waiting for a call, so
        // popular pages do not drift; its client is answered at once meanwhile.
        let overdue = now - entry.storedAt > 2 * entry.lifetime
        let started = tasks.run(.background) {
            let grant: KeyBudget.Grant
            if overdue {
                deliver(revalidating)
                grant = await self.budget.callForOverdueRefresh()
            } else {
                grant = await self.budget.callForRefresh()
            }
            if !grant.isGranted {
                self.coalescer.finish(key) { .answer(entry, stored: false) }
                self.statistics.count(.budgetDenial)
                self.statistics.count(.staleForBudget)
                self.statistics.count(.refreshDeferred, route: request.route)
                guard !overdue else { return }
                let outcome = CacheOutcome.stale(ttl: ttl, reason: .budget, fwdStatus: nil)
                deliver(entry.response(at: now, outcome: outcome, accept: accept, ifNoneMatch: ifNoneMatch))
                return
            }
            self.statistics.count(.refresh)
            self.statistics.count(.staleWhileRevalidate)
            if !overdue { deliver(revalidating) }
            // Another replica may have refreshed it already, or failed to (the call granted then goes unused).
            if let shared = await self.coalescer.lead(key, arrivedAt: now) {
                self.finish(key, with: shared, refreshing: true)
                await self.coalescer.share(key, nil)
                return
            }
            let fetched = await self.fill(request, priority: overdue ? .miss : .refresh, grant: grant)
            let result = self.finish(key, with: fetched, refreshing: true)
            await self.share(key, result)
        }
        if started { return .later }
        coalescer.finish(key) { .answer(entry, stored: false) }
        statistics.count(.staleWhileRevalidate)
        return .now(revalidating)
    }

    /// Stores a fetched answer and ends the lease in one step, hands the result to those who
    /// joined, and remembers a failed refresh's back-off. Nothing is stored once shutdown
    /// has closed the cache for its final snapshot. An answer to store gets its gzip
    /// variant first (`withGzip`), before anyone is answered from it; one another replica
    /// stored comes with the variants it made (`CacheEnvelope`), and is never compressed here.
    @discardableResult
    private func finish(_ key: String, with fetched: FetchResult, refreshing: Bool) -> FetchResult {
        let fetched = withGzip(fetched, for: key)
        // The back-off is settled in the same step as the lease ends: a request arriving in
        // between would find neither the refresh in flight nor its failure, and start another.
        return coalescer.finish(key) { () -> FetchResult in
            switch fetched {
            case .answer(let entry, true), .shared(let entry):
                let stored = storesOpen.withLock { open in open && cache.store(entry, for: key) }
                if stored { makeVariants(of: entry, for: key) }
                backoff.clear(key)
                if case .shared = fetched { return fetched }
                return .answer(entry, stored: stored)
            case .answer:
                backoff.clear(key)
            case .failed(let failure) where refreshing:
                let now = clock.now()
                let wait =
                    failure.backoff.isFinite
                    ? min(max(failure.backoff, policy.refreshBackoff), RetryAfter.longest) : policy.refreshBackoff
                backoff.record(.init(until: now + wait, fwdStatus: failure.fwdStatus), for: key, now: now)
            case .failed:
                break  // a miss has no stale copy to serve meanwhile: nothing to remember
            }
            return fetched
        }
    }

    /// A fetched 200 that the cache will keep, with its gzip variant made now, on the fill's
    /// own task: those who joined the fill, and the hits until br is made too, are answered
    /// in gzip when they ask for it, not identity (br, much slower to make, follows off the
    /// event loops). Anything else is left as it is: an answer not stored is not compressed.
    /// An entry that comes with variants (from another replica) that the cache would not
    /// keep whole is kept identity only, complete: it is not compressed here either.
    private func withGzip(_ fetched: FetchResult, for key: String) -> FetchResult {
        guard case .answer(let entry, true) = fetched, entry.status == 200,
            cache.admits(byteCount: entry.body.count, for: key),
            storesOpen.withLock({ $0 })
        else { return fetched }
        if let variants = entry.variants {
            return .answer(
                entry.with(VariantMaker.fitting(variants) { cache.admits(byteCount: $0, for: key) }), stored: true)
        }
        let gzipped = variantMaker.gzipped(entry) { cache.admits(byteCount: $0, for: key) }
        // Small enough alone but not with its gzip bytes: kept identity only, as before.
        return .answer(cache.admits(gzipped, for: key) ? gzipped : entry, stored: true)
    }

    /// Has `entry`'s variants (those still pending) made off the event loops and stores it
    /// again with them, while it is still the answer stored under `key`, with the variants
    /// it had, and the cache still takes stores; then gives them to the other replicas.
    /// Also for entries loaded from a snapshot, which keeps identity bytes only.
    func makeVariants(of entry: CachedResponse, for key: String) {
        let holds: @Sendable (CachedResponse) -> Bool = { [cache] entry in
            guard let current = cache.entry(for: key) else { return false }
            return current.isSameAnswer(as: entry) && current.variants == entry.variants
        }
        variantMaker.make(
            entry,
            in: VariantMaker.Slot(
                holds: { [self] entry in storesOpen.withLock { $0 } && holds(entry) },
                admits: { [cache] in cache.admits(byteCount: $0, for: key) },
                store: { [self] withVariants in
                    // Under the stores' lock, so that a refresh stored meanwhile is never overwritten.
                    let stored = storesOpen.withLock { open in
                        open && holds(entry) && cache.store(withVariants, for: key)
                    }
                    if stored { tasks.run(.background) { await self.coalescer.shareVariants(key, withVariants) } }
                    return stored
                }))
    }

    /// Shares a stored answer with the other replicas and ends the fleet's lease; then the
    /// variants the queue may have made meanwhile (those made later are shared by the queue).
    private func share(_ key: String, _ result: FetchResult?) async {
        await coalescer.share(key, result)
        guard case .answer(let shared, true)? = result, let current = cache.entry(for: key),
            current.isSameAnswer(as: shared),
            current.variants != shared.variants
        else { return }
        await coalescer.shareVariants(key, current)
    }

    // MARK: Calling amodb

    /// Calls amodb within the budget (retrying 429 as it asks) and judges the answer. The
    /// first call of a miss is also one of its `client`'s share; a retry after amodb's 429 is
    /// the same miss, within the budget only. `grant`: the first call's, when it was
    /// granted already (a refresh).
    private func fill(
        _ request: AmodbRequest, priority: CallPriority, client: String? = nil, grant: KeyBudget.Grant? = nil
    ) async -> FetchResult {
        var retries = 0
        var granted = grant
        var client = client
        while true {
            let decision: KeyBudget.Grant
            if let given = granted {
                decision = given
            } else {
                decision = await acquire(priority, client: client)
                switch decision.decision {
                case .granted, .probe:
                    break
                case .denied(let retryAfter):
                    statistics.count(.budgetDenial)
                    if priority == .miss { statistics.count(.missRefused, route: request.route) }
                    logger.warning(
                        "upstream budget spent; not calling amodb",
                        [
                            "path": request.route.template,
                            "retry_after": String(ClientFailure.retryAfterSeconds(retryAfter)),
                        ])
                    return .failed(.noCall(.budgetExhausted, retryAfter: retryAfter))
                case .shareSpent(let retryAfter):
                    statistics.count(.clientShareDenial)
                    return .failed(.noCall(.clientShareSpent, retryAfter: retryAfter))
                }
            }
            granted = nil
            client = nil
            let (outcome, retryAfter) = await call(request, grant: decision)
            if let wait = retryAfter {
                if retries < policy.maxRateLimitRetries, wait <= policy.retryAfterCap {
                    retries += 1
                    logger.warning(
                        "amodb rate limit reached; waiting as it asks",
                        ["retry_after": String(ClientFailure.retryAfterSeconds(wait)), "path": request.route.template])
                    // Shutdown wakes the wait: the clients then get the 429's answer at once.
                    if await tasks.pause(wait) { continue }
                }
            }
            return interpret(outcome, retryAfter: retryAfter, for: request)
        }
    }

    /// A call from the budget: a miss waits its turn for one, with one of its `client`'s
    /// share; a refresh takes one only from slack, and never waits.
    private func acquire(_ priority: CallPriority, client: String?) async -> KeyBudget.Grant {
        switch priority {
        case .miss: await budget.callForMiss(client: client)
        case .refresh: await budget.callForRefresh()
        }
    }

    /// One call to amodb, granted as `grant`: counted, its answer told to the budget, its
    /// status to the key probe. `pause`: when amodb said 429, how long the budget now waits.
    private func call(_ request: AmodbRequest, grant: KeyBudget.Grant) async -> (
        outcome: Result<UpstreamResponse, UpstreamError>, pause: Double?
    ) {
        statistics.count(.upstreamCall)
        let outcome = await fetcher.fetch(request)
        guard case .success(let upstream) = outcome else {
            await budget.unanswered(grant: grant)
            return (outcome, nil)
        }
        let pause = await tellBudget(upstream, grant: grant)
        keyProbe.observe(status: upstream.status) { [weak self] in await self?.probeKey() }
        return (outcome, pause)
    }

    /// Gives amodb's answer to the budget (its rate-limit fields, a 429); the fields it
    /// ignores are logged by name. Returns the pause a 429 started.
    private func tellBudget(_ upstream: UpstreamResponse, grant: KeyBudget.Grant) async -> Double? {
        let retryAfter = upstream.status == 429 ? readRetryAfter(upstream) : nil
        let told = await budget.answered(
            status: upstream.status, headers: upstream.headers, retryAfter: retryAfter, grant: grant)
        for field in told.ignored {
            logger.warning("ignored an unreadable or out-of-range rate-limit field from amodb", ["field": field])
        }
        return told.pause
    }

    /// amodb's `Retry-After`, read by the one parser; an unreadable one is logged and ignored.
    private func readRetryAfter(_ upstream: UpstreamResponse) -> Double? {
        let seconds = upstream.retryAfterSeconds(now: clock.now())
        if seconds == nil, upstream.headers["retry-after"] != nil {
            logger.warning("ignored an unreadable Retry-After from amodb", ["field": "retry-after"])
        }
        return seconds
    }

    /// One cheap call to see whether amodb accepts the key again: within the budget's
    /// reserve, its status (or `nil` when no call was made or none came back).
    private func probeKey() async -> Int? {
        let grant = await budget.callForRefresh()
        guard grant.isGranted else {
            statistics.count(.budgetDenial)
            return nil
        }
        statistics.count(.keyProbe)
        guard let request = try? AmodbRequest(route: .trending(.all, .day)) else {
            await budget.unanswered(grant: grant)
            return nil
        }
        statistics.count(.upstreamCall)
        guard case .success(let upstream) = await fetcher.fetch(request) else {
            await budget.unanswered(grant: grant)
            return nil
        }
        _ = await tellBudget(upstream, grant: grant)
        if upstream.status == 200 || upstream.status == 404 { logger.info("amodb accepts the key again") }
        return upstream.status
    }

    /// What amodb's answer means for the clients (`UpstreamAnswerTable`), with the body checked.
    private func interpret(
        _ outcome: Result<UpstreamResponse, UpstreamError>, retryAfter: Double?, for request: AmodbRequest
    ) -> FetchResult {
        let route = request.route
        switch UpstreamAnswerTable.verdict(for: outcome, retryAfter: retryAfter) {
        case .store:
            guard case .success(let upstream) = outcome else { return .failed(UpstreamAnswerTable.unusable) }
            if let problem = validator.problem(with: upstream.body, for: route) {
                logger.error("amodb sent an unusable answer; not stored", ["path": route.template, "problem": problem])
                return .failed(UpstreamAnswerTable.unusable)
            }
            return .answer(
                CachedResponse(
                    body: upstream.body, storedAt: clock.now(), lifetime: policy.freshness.lifetime(of: route)),
                stored: true)
        case .storeNegative:
            let body = HTTPResponse.error(404, "The resource you requested could not be found.").body
            let entry = CachedResponse(status: 404, body: body, storedAt: clock.now(), lifetime: policy.negativeTTL)
            return .answer(entry, stored: policy.negativeTTL > 0)
        case .fail(let failure, let level, let message):
            var fields = ["path": route.template]
            if let status = failure.fwdStatus { fields["upstream_status"] = String(status) }
            logger.log(level, message, fields)
            return .failed(failure)
        }
    }

    // MARK: Shutdown

    /// Returns once every task has ended or waits for the clock (`BackgroundTasks.settled`):
    /// how a replay on a simulated clock knows a request has gone as far as it can.
    func settled() async {
        await tasks.settled()
    }

    /// Begins shutdown: wakes the tasks waiting out a 429 or a probe interval (they give up)
    /// and starts no new refreshes or probes.
    func stopBackgroundWork() {
        tasks.stop()
    }

    /// Lets the fetches in flight finish for at most `seconds`, then closes the cache to
    /// stores: after this returns, nothing the forwarder does changes it.
    func drain(within seconds: Double) async {
        await tasks.drain(within: seconds)
        storesOpen.withLock { $0 = false }
    }

    /// The sizes of the forwarder's tables, for the metrics.
    var tableSizes: (inFlight: Int, backoff: Int, clients: Int, tasks: Int) {
        (coalescer.inFlight, backoff.count, budget.trackedClients, tasks.count)
    }
}
