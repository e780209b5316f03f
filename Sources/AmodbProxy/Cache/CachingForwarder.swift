import AmodbCompression
import AmodbHTTP
import AmodbModels
import Synchronization

/// Answers forwarded routes so that amodb's budget is never wasted and callers never
/// wait once a path has been filled, by running the cache's stages in order:
/// - the cache decision (`CacheDecision`, a pure function of the entry, the time and the
///   policy): a fresh entry is answered at once (`hit`); a stale one younger than max-stale
///   at once while one background refresh runs (stale-while-revalidate), or while amodb
///   keeps failing (stale-if-error);
/// - nothing usable: one fill (`Fill`) however many callers ask, through the path's lease
///   (`FetchLeases`), granted by the `KeyBudget` with one of the leading caller's share;
/// - its result committed (`Commit`): stored, the lease ended, those who joined answered,
///   the fleet told; amodb's 404 is kept briefly (negative caching).
///
/// Every call to amodb is granted by the budget and its answer told back to it: the forwarder
/// decides what to fetch, never whether the key may afford it. Each answer carries a typed
/// `CacheOutcome`, which the deliver stage writes as `Cache-Status`.
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
    private let clock: any ProxyClock
    private let policy: Policy
    let statistics: CacheStatistics
    /// One fill per path: claimed here, ended by the commit stage.
    private let leases: any FetchLeases
    private let tasks: BackgroundTasks
    private let fill: Fill

    /// Why calls from the fleet's window are paused now, and until when (`CallBudget.pause`).
    func budgetPause(now: Double) -> (reason: PauseReason, until: Double)? {
        fill.budget.window.pause(now: now)
    }
    private let commit: Commit

    /// Compresses each stored answer once, off the event loops.
    var variantMaker: VariantMaker { commit.variantMaker }

    /// Whether amodb rejected the key (401) or the plan (402) on its last say.
    var keyRejected: Bool { fill.keyRejected }

    /// A forwarder storing in `cache`, calling `fetcher` within the window `budget`.
    init(
        cache: any ResponseCache, fetcher: any UpstreamFetcher, budget: any CallBudget, clock: any ProxyClock,
        logger: ProxyLogger, policy: Policy, validator: AnswerValidator, statistics: CacheStatistics,
        leases: (any FetchLeases)? = nil
    ) {
        self.cache = cache
        self.clock = clock
        self.policy = policy
        self.statistics = statistics
        let tasks = BackgroundTasks(clock: clock)
        self.tasks = tasks
        let leases = leases ?? MemoryFetchLeases(capacity: policy.maxFetchesInFlight)
        self.leases = leases
        self.fill = Fill(
            fetcher: fetcher, budget: budget, clock: clock, logger: logger, policy: policy, validator: validator,
            statistics: statistics, tasks: tasks)
        self.commit = Commit(cache: cache, leases: leases, tasks: tasks, clock: clock, policy: policy)
    }

    /// The answer for `request`: at once from the cache, else `nil` and, later, to the
    /// delivery `later()` makes (made only then: a hit allocates none).
    /// `client`: the caller's limit key (`CallerIdentity.limitKey`), whose share of the calls
    /// a miss spends; `nil`: no share applies.
    /// `key`: the request's `CacheKey`, when the caller has made it already.
    /// `loop`: the event loop whose queue this runs on, if any (`ResponderContext.loopIndex`),
    /// where a hit is counted.
    func respond(
        to request: AmodbRequest, key: CacheKey? = nil, ifNoneMatch: String?, accept: AcceptEncoding = AcceptEncoding(),
        client limitKey: String?,
        loop: Int? = nil, later: () -> AnswerDelivery
    ) -> ProxyAnswer? {
        let key = (key ?? CacheKey(request)).text
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
            request, key: key, now: now, accept: accept, ifNoneMatch: ifNoneMatch, limitKey: limitKey, loop: loop,
            deliver: later())
    }

    /// The answer for a request that found nothing usable stored: it joins the fill in
    /// flight, or leads one (`nil`: `deliver` gets the answer later), or finds the answer
    /// stored after all. `counted`: the request was already counted as a miss (it asks again).
    private func fetch(
        _ request: AmodbRequest, key: String, now: Double, accept: AcceptEncoding, ifNoneMatch: String?,
        limitKey: String?,
        loop: Int?, deliver: @escaping AnswerDelivery, counted: Bool = false
    ) -> ProxyAnswer? {
        let waiter: FetchWaiter = { [weak self, clock] result in
            if case .failed(let failure) = result, failure.detail == .clientShareSpent, let self {
                self.askAgain(
                    request, key: key, accept: accept, ifNoneMatch: ifNoneMatch, limitKey: limitKey, deliver: deliver)
                return
            }
            deliver(result.answer(at: clock.now(), collapsed: true, accept: accept, ifNoneMatch: ifNoneMatch))
        }
        let freshness = policy.freshness
        let claim = leases.claim(
            key,
            cached: {
                let entry = cache.entry(for: key)
                return CacheDecision(entry, of: request.route, at: now, freshness: freshness) { nil }.isUsable
                    ? entry : nil
            },
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
                return entry.answer(at: now, outcome: outcome, accept: accept, ifNoneMatch: ifNoneMatch)
            }
        case .joined:
            if !counted { statistics.countMiss(key) }
            statistics.count(.collapsed)
            return nil
        case .refused(let detail):
            if !counted { statistics.countMiss(key) }
            return FetchFailure.noCall(detail, retryAfter: 1).answer(collapsed: false)
        case .leads:
            if !counted { statistics.countMiss(key) }
            tasks.run(.awaited) {
                // Another replica may have stored it, be fetching it, or have just failed to: then no call from here.
                if let shared = await self.leases.lead(key, arrivedAt: now) {
                    let result = self.commit.store(key, with: shared, refreshing: false)
                    deliver(
                        result.answer(at: self.clock.now(), collapsed: true, accept: accept, ifNoneMatch: ifNoneMatch)
                    )
                    await self.leases.share(key, nil)
                    return
                }
                let fetched = await self.fill.run(request, priority: .miss, limitKey: limitKey)
                let result = self.commit.store(key, with: fetched, refreshing: false)
                deliver(
                    result.answer(at: self.clock.now(), collapsed: false, accept: accept, ifNoneMatch: ifNoneMatch))
                // A refusal of this caller's share is its own: the other replicas waiting on
                // the path are told only that no call was made, and look again.
                let spentShare =
                    if case .failed(let failure) = fetched { failure.detail == .clientShareSpent } else { false }
                await self.commit.share(key, spentShare ? nil : result)
            }
            return nil
        }
    }

    /// A request that joined a fill whose leader's own caller had no call left, so that the
    /// leader made none: the share spent is not this caller's, so it asks again, as itself,
    /// already counted as a miss. This ends: each time follows another leader's refusal.
    /// Not on an event loop's queue any more (no `loop`).
    private func askAgain(
        _ request: AmodbRequest, key: String, accept: AcceptEncoding, ifNoneMatch: String?, limitKey: String?,
        deliver: @escaping AnswerDelivery
    ) {
        if let answer = fetch(
            request, key: key, now: clock.now(), accept: accept, ifNoneMatch: ifNoneMatch, limitKey: limitKey,
            loop: nil, deliver: deliver, counted: true)
        {
            deliver(answer)
        }
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

    /// The answer from a stored entry, as the cache decision has it.
    private func stored(
        _ entry: CachedResponse, for request: AmodbRequest, key: String, now: Double, accept: AcceptEncoding,
        ifNoneMatch: String?, loop: Int?, later: () -> AnswerDelivery
    ) -> StoredAnswer {
        let backoff = commit.backoff
        switch CacheDecision(
            entry, of: request.route, at: now, freshness: policy.freshness,
            refreshFailure: {
                backoff.failure(for: key, now: now)
            })
        {
        case .fresh(let ttl):
            statistics.count(entry.status == 200 ? .hit : .negativeHit, loop: loop)
            return .now(entry.answer(at: now, outcome: .hit(ttl: ttl), accept: accept, ifNoneMatch: ifNoneMatch))
        case .stale(let ttl, let fwdStatus):
            statistics.count(.staleIfError)
            let outcome = CacheOutcome.stale(ttl: ttl, reason: .error, fwdStatus: fwdStatus)
            return .now(entry.answer(at: now, outcome: outcome, accept: accept, ifNoneMatch: ifNoneMatch))
        case .revalidate(let ttl, let overdue):
            return revalidate(
                entry, for: request, key: key, now: now, ttl: ttl, overdue: overdue, accept: accept,
                ifNoneMatch: ifNoneMatch, later: later)
        case .miss:
            return .unusable
        }
    }

    /// A stale answer, and a background refresh unless one runs or the budget has no call
    /// for it. A stale entry can still be answered, so its refresh waits for slack in the
    /// window, and the request that starts it gets its answer once the budget has decided
    /// (it may ask Redis: tens of ms at most). An `overdue` one's refresh goes first, ahead
    /// of the misses waiting for a call, and its request is answered at once meanwhile.
    /// Every other request is answered at once.
    private func revalidate(
        _ entry: CachedResponse, for request: AmodbRequest, key: String, now: Double, ttl: Int, overdue: Bool,
        accept: AcceptEncoding, ifNoneMatch: String?, later: () -> AnswerDelivery
    ) -> StoredAnswer {
        let revalidating = entry.answer(
            at: now, outcome: .stale(ttl: ttl, reason: .revalidate, fwdStatus: nil), accept: accept,
            ifNoneMatch: ifNoneMatch)
        guard case .leads = leases.claim(key, cached: { nil }, waiter: nil) else {
            statistics.count(.staleWhileRevalidate)
            return .now(revalidating)
        }
        let deliver = later()
        let started = tasks.run(.background) {
            if overdue { deliver(revalidating) }
            let grant: KeyBudget.Grant
            if overdue {
                grant = await self.fill.budget.callForOverdueRefresh()
            } else {
                grant = await self.fill.budget.callForRefresh()
            }
            guard grant.isGranted else {
                self.commit.release(key) { .answer(entry, stored: false) }
                self.statistics.count(.budgetDenial)
                self.statistics.count(.staleForBudget)
                self.statistics.count(.refreshDeferred, route: request.route)
                if !overdue {
                    let outcome = CacheOutcome.stale(ttl: ttl, reason: .budget, fwdStatus: nil)
                    deliver(entry.answer(at: now, outcome: outcome, accept: accept, ifNoneMatch: ifNoneMatch))
                }
                return
            }
            self.statistics.count(.refresh)
            self.statistics.count(.staleWhileRevalidate)
            if !overdue { deliver(revalidating) }
            await self.refresh(request, key: key, arrivedAt: now, overdue: overdue, grant: grant)
        }
        if started { return .later }
        commit.release(key) { .answer(entry, stored: false) }
        statistics.count(.staleWhileRevalidate)
        return .now(revalidating)
    }

    /// The refresh of a stale entry, its call granted already: filled and committed, unless
    /// another replica refreshed it already, or failed to (the call granted then goes unused).
    private func refresh(
        _ request: AmodbRequest, key: String, arrivedAt: Double, overdue: Bool, grant: KeyBudget.Grant
    ) async {
        if let shared = await leases.lead(key, arrivedAt: arrivedAt) {
            commit.store(key, with: shared, refreshing: true)
            await leases.share(key, nil)
            return
        }
        let fetched = await fill.run(request, priority: overdue ? .miss : .refresh, grant: grant)
        let result = commit.store(key, with: fetched, refreshing: true)
        await commit.share(key, result)
    }

    /// Has `entry`'s variants made off the event loops and stored with it (`Commit.makeVariants`):
    /// for entries loaded from a snapshot, which keeps identity bytes only.
    func makeVariants(of entry: CachedResponse, for key: String) {
        commit.makeVariants(of: entry, for: key)
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
        commit.close()
    }

    /// The sizes of the forwarder's tables, for the metrics.
    var tableSizes: (inFlight: Int, backoff: Int, clients: Int, tasks: Int) {
        (leases.count, commit.backoff.count, fill.budget.trackedClients, tasks.count)
    }
}
