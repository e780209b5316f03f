import AmodbModels

/// What the cache's stages share, and their lifetime: the cache, the leases (one fill per
/// path), the background tasks, the fill stage (`Fill`, calling amodb with what the
/// `KeyBudget` grants) and the commit stage (`Commit`). It decides nothing: the driver
/// (`ProxyDriver`) runs the stages, in one place; this is what they run on, and how it
/// settles, drains and reports its tables.
final class CacheStages: Sendable {
    /// Lifetimes, retries, back-off and the bounds of the stages' tables. What an operator
    /// can set comes from `ProxyConfiguration`, where its default is written.
    struct Policy: Sendable {
        /// Each route's lifetime, and how old its answers may be served stale (`Freshness`).
        var freshness: Freshness
        /// Lifetime of a remembered 404, in seconds (0: not remembered).
        var negativeTTL: Double
        /// When a call amodb refused is made again, and a failed refresh's back-off (`RetryRules`).
        var retry: RetryRules
        /// Seconds a miss waits for a call once the window is spent, before its 503 (0: none).
        var missWait: Double
        /// Misses waiting for a call at once, at most; beyond, a miss is refused at once.
        var maxWaitingMisses = 256
        /// Calls per window each client's misses of a miss-only route may cause (`nil`: no share of its own).
        var missOnlyShare: Int?
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
            retry = RetryRules(retryAfterCap: configuration.retryAfterCap)
            missWait = configuration.missWait
            missOnlyShare = CallerShare.callsPerWindow(
                limit: configuration.rateLimit, fraction: configuration.searchShare)
        }

        /// The key's budget over `window` with this policy's miss queue and miss-only share;
        /// its waits run on `tasks`.
        func budget(window: any CallBudget, clock: any ProxyClock, tasks: BackgroundTasks) -> KeyBudget {
            KeyBudget(
                window: window, missWait: missWait, queueCapacity: maxWaitingMisses,
                missOnlyShare: missOnlyShare.map { CallerShare(callsPerWindow: $0) }, clock: clock, tasks: tasks)
        }
    }

    let cache: any ResponseCache
    let clock: any ProxyClock
    let policy: Policy
    let statistics: CacheStatistics
    /// One fill per path: claimed by the driver, ended by the commit stage.
    let leases: any FetchLeases
    /// The fills, refreshes, waits and probes running; shutdown wakes and drains them.
    let tasks: BackgroundTasks
    let fill: Fill
    let commit: Commit

    /// The stages over `cache`, calling `fetcher` with the calls `budget` grants; `tasks`
    /// runs their work (the budget's waits too: build both on the same).
    init(
        cache: any ResponseCache, fetcher: any UpstreamFetcher, budget: KeyBudget, tasks: BackgroundTasks,
        clock: any ProxyClock, logger: ProxyLogger, policy: Policy, validator: AnswerValidator,
        statistics: CacheStatistics, leases: (any FetchLeases)? = nil
    ) {
        self.cache = cache
        self.clock = clock
        self.policy = policy
        self.statistics = statistics
        self.tasks = tasks
        let leases = leases ?? MemoryFetchLeases(capacity: policy.maxFetchesInFlight)
        self.leases = leases
        fill = Fill(
            fetcher: fetcher, budget: budget, clock: clock, logger: logger, policy: policy, validator: validator,
            statistics: statistics, tasks: tasks)
        commit = Commit(cache: cache, leases: leases, tasks: tasks, clock: clock, policy: policy)
    }

    /// The key's budget the fill stage spends.
    var budget: KeyBudget { fill.budget }

    /// Compresses each stored answer once, off the event loops.
    var variantMaker: VariantMaker { commit.variantMaker }

    /// Whether amodb rejected the key (401) or the plan (402) on its last say.
    var keyRejected: Bool { fill.keyRejected }

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
    /// stores: after this returns, nothing the stages do changes it.
    func drain(within seconds: Double) async {
        await tasks.drain(within: seconds)
        commit.close()
    }

    /// The sizes of the stages' tables, for the metrics.
    var tableSizes: (inFlight: Int, backoff: Int, clients: Int, tasks: Int) {
        (leases.count, commit.backoff.count, budget.trackedClients, tasks.count)
    }
}
