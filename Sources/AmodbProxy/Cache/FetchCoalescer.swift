/// One upstream call per path however many clients ask: the first request takes the
/// lease and fetches, the others join and get the same result. The lease table is a
/// `FetchLeases` (in memory today); this type hands results to those who waited.
final class FetchCoalescer: Sendable {
    private let leases: any FetchLeases

    /// A coalescer over `leases`.
    init(leases: any FetchLeases) {
        self.leases = leases
    }

    /// Finds a usable stored entry, joins the fetch in flight or takes the lease, in one step.
    func claim(_ key: String, cached: () -> CachedResponse?, waiter: FetchWaiter?) -> LeaseClaim {
        leases.claim(key, cached: cached, waiter: waiter)
    }

    /// Ends the lease of `key`: `commit` stores the answer, in the same step, and returns
    /// the result the waiters get; then each waiter gets it. Returns that result.
    @discardableResult
    func finish(_ key: String, commit: () -> FetchResult) -> FetchResult {
        let (result, waiters) = leases.release(key, commit: commit)
        for waiter in waiters { waiter(result) }
        return result
    }

    /// In the leader's task: what another replica's fetch gave for a request that arrived at
    /// `arrivedAt`, else `nil` (call amodb).
    func lead(_ key: String, arrivedAt: Double) async -> FetchResult? {
        await leases.lead(key, arrivedAt: arrivedAt)
    }

    /// After the leader's answer is stored: shares how the fetch ended with the other
    /// replicas (`nil`: it made none), ends the fleet's lease.
    func share(_ key: String, _ result: FetchResult?) async {
        await leases.share(key, result)
    }

    /// Once the variants of an answer shared before are made: gives them to the other replicas.
    func shareVariants(_ key: String, _ entry: CachedResponse) async {
        await leases.shareVariants(key, entry)
    }

    /// Paths being fetched now.
    var inFlight: Int { leases.count }
}
