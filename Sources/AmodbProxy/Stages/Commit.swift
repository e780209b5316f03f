import AmodbModels
import Synchronization

/// The commit stage: what a fill's result leaves behind. It stores the answer (with its
/// gzip variant made first, the other variants off the event loops), ends the path's
/// lease and hands the result to each request that joined the fill, remembers a failed
/// refresh's back-off, and gives the answer to the other replicas (`FetchLeases`).
/// Nothing is stored once shutdown has closed the cache for its final snapshot.
final class Commit: Sendable {
    private let cache: any ResponseCache
    /// One fill per path: the leases end here, and the fleet hears here how a fill ended.
    private let leases: any FetchLeases
    /// Paths whose last refresh failed, served stale meanwhile (read by the cache decision).
    let backoff: RefreshBackoff
    private let tasks: BackgroundTasks
    private let clock: any ProxyClock
    /// How long a failed refresh backs off (the budget's rule).
    private let retry: RetryRules
    /// Cleared once shutdown has written (or is about to write) the final snapshot.
    private let storesOpen = Mutex(true)
    /// Compresses each stored answer once, off the event loops.
    let variantMaker = VariantMaker()

    /// A commit stage storing in `cache` and ending the leases of `leases`.
    init(
        cache: any ResponseCache, leases: any FetchLeases, tasks: BackgroundTasks, clock: any ProxyClock,
        policy: CacheStages.Policy
    ) {
        self.cache = cache
        self.leases = leases
        self.tasks = tasks
        self.clock = clock
        self.retry = policy.retry
        self.backoff = RefreshBackoff(capacity: policy.maxBackoffEntries)
    }

    /// Ends the lease of `key`: `commit` decides the result in the same step (storing it,
    /// if it does), then each request that joined the fill gets that result. Returns it.
    @discardableResult
    func release(_ key: CacheKey, commit: () -> FetchResult) -> FetchResult {
        let (result, waiters) = leases.release(key.text, commit: commit)
        for waiter in waiters { waiter(result) }
        return result
    }

    /// Stores a fetched answer and ends the lease in one step, hands the result to those who
    /// joined, and remembers a failed refresh's back-off. An answer to store gets its gzip
    /// variant first (`withGzip`), before anyone is answered from it; one another replica
    /// stored comes with the variants it made (`CacheEnvelope`), and is never compressed here.
    @discardableResult
    func store(_ cacheKey: CacheKey, with fetched: FetchResult, refreshing: Bool) -> FetchResult {
        let key = cacheKey.text
        let fetched = withGzip(fetched, for: key)
        // The back-off is settled in the same step as the lease ends: a request arriving in
        // between would find neither the refresh in flight nor its failure, and start another.
        return release(cacheKey) { () -> FetchResult in
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
                backoff.record(
                    .init(until: now + retry.backoff(after: failure), fwdStatus: failure.fwdStatus), for: key, now: now)
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
                    if stored { tasks.run(.background) { await self.leases.shareVariants(key, withVariants) } }
                    return stored
                }))
    }

    /// Shares how a fill ended with the other replicas (`nil`: it made no call) and ends
    /// the fleet's lease; then the variants the queue may have made meanwhile (those made
    /// later are shared by the queue).
    func share(_ cacheKey: CacheKey, _ result: FetchResult?) async {
        let key = cacheKey.text
        await leases.share(key, result)
        guard case .answer(let shared, true)? = result, let current = cache.entry(for: key),
            current.isSameAnswer(as: shared),
            current.variants != shared.variants
        else { return }
        await leases.shareVariants(key, current)
    }

    /// Closes the cache to stores: after this, nothing the commit stage does changes it.
    func close() {
        storesOpen.withLock { $0 = false }
    }
}
