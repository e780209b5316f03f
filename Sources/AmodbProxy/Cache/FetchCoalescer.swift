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
    func claim(
        _ key: String, cached: () -> CachedResponse?, mayLead: () -> CacheOutcome.MissDetail? = { nil }, waiter: FetchWaiter?
    ) -> LeaseClaim {
        leases.claim(key, cached: cached, mayLead: mayLead, waiter: waiter)
    }

    /// Ends the lease of `key`: `commit` stores the answer, in the same step, and returns
    /// the result the waiters get; then each waiter gets it. Returns that result.
    @discardableResult
    func finish(_ key: String, commit: () -> FetchResult) -> FetchResult {
        let (result, waiters) = leases.release(key, commit: commit)
        for waiter in waiters { waiter(result) }
        return result
    }

    /// In the leader's task: a fresh answer another replica stored, else `nil` (call amodb).
    func lead(_ key: String) async -> CachedResponse? {
        await leases.lead(key)
    }

    /// After the leader's answer is stored: shares it with the other replicas, ends the fleet's lease.
    func share(_ key: String, _ entry: CachedResponse?) async {
        await leases.share(key, entry)
    }

    /// Once the variants of an answer shared before are made: gives them to the other replicas.
    func shareVariants(_ key: String, _ entry: CachedResponse) async {
        await leases.shareVariants(key, entry)
    }

    /// Paths being fetched now.
    var inFlight: Int { leases.count }
}
