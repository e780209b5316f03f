/// What a request got from `FetchLeases.claim`.
enum LeaseClaim: Sendable {
    /// A usable entry was stored after all: answer from it.
    case cached(CachedResponse)
    /// A fetch of the path is in flight; the waiter (if any) gets its result.
    case joined
    /// This request holds the lease: it must fetch, then `release` it.
    case leads
    /// Nobody fetches the path and this request may not start a fetch (too many in flight).
    case refused(CacheOutcome.MissDetail)
}

/// The in-flight leases: which paths are being fetched from amodb now, and who waits
/// for each. Behind a protocol so a shared implementation (Redis, for several replicas)
/// can take the in-memory one's place; the cache hit path never touches it.
///
/// Lookup, join and register are one step (`claim`), and storing the answer and ending
/// the lease are one step (`release`): a request that arrives just as a fetch completes
/// either joins it or finds its answer stored, and never starts a second call.
///
/// Both are synchronous because they run while a request is answered, on an event loop.
/// A shared implementation keeps this process's waiters here and takes the shared lease
/// inside the leader's task (which may await), before it calls amodb.
protocol FetchLeases: Sendable {
    /// Atomically: a usable stored entry (`cached`, asked under the lease's lock), else
    /// joining the fetch in flight (adding `waiter`), else taking the lease.
    func claim(_ key: String, cached: () -> CachedResponse?, waiter: FetchWaiter?) -> LeaseClaim

    /// Atomically: runs `commit` (storing the answer) and ends the lease; returns what
    /// `commit` returned and who joined.
    func release<Result>(_ key: String, commit: () -> Result) -> (Result, [FetchWaiter])

    /// Leases held now.
    var count: Int { get }

    /// In the leader's task, before it calls amodb, for a request that arrived at `arrivedAt`
    /// (the forwarder's clock): a fresh answer another replica stored (`.shared`), or how
    /// another replica's fetch of the path failed after that request arrived (`.failed`),
    /// to hand out instead of calling; `nil` when this replica must call. A shared
    /// implementation takes the fleet's lease here and waits while another replica holds it;
    /// the in-memory one returns `nil` at once.
    func lead(_ key: String, arrivedAt: Double) async -> FetchResult?

    /// After the leader has stored its answer here: gives how its fetch ended (`result`; `nil`
    /// when it made none) to the other replicas and ends the fleet's lease. The in-memory
    /// implementation has no one to tell.
    func share(_ key: String, _ result: FetchResult?) async

    /// Once `entry`, shared before, has had its variants made here: gives the other replicas
    /// this copy in place of the one shared without them, and never over another answer.
    func shareVariants(_ key: String, _ entry: CachedResponse) async
}
