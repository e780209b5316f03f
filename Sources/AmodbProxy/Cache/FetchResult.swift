import AmodbCompression
import AmodbHTTP

/// How a fetch from amodb ended, shared by every request that waited on it.
enum FetchResult: Sendable {
    /// amodb's 200, or its 404 as a negative entry; `stored` says whether the cache kept it.
    case answer(CachedResponse, stored: Bool)
    /// A fresh entry another replica fetched, read from the fleet's shared cache (no call made).
    case shared(CachedResponse)
    /// An error for the clients.
    case failed(FetchFailure)

    /// The answer for one client at `now`; `collapsed` when it joined another's fetch.
    /// `ifNoneMatch`: the tags the client has (a stored 200 it has is a 304).
    func answer(
        at now: Double, collapsed: Bool, accept: AcceptEncoding = AcceptEncoding(), ifNoneMatch: String? = nil
    ) -> ProxyAnswer {
        switch self {
        case .answer(let entry, let stored):
            let outcome = CacheOutcome.miss(fwdStatus: entry.status, stored: stored, collapsed: collapsed, detail: nil)
            return entry.answer(at: now, outcome: outcome, accept: accept, ifNoneMatch: ifNoneMatch)
        case .shared(let entry):
            return entry.answer(
                at: now, outcome: .sharedHit(ttl: entry.remainingLifetime(at: now)), accept: accept,
                ifNoneMatch: ifNoneMatch)
        case .failed(let failure):
            return failure.answer(collapsed: collapsed)
        }
    }
}

/// A request waiting on a fetch in flight: called once with its result.
typealias FetchWaiter = @Sendable (FetchResult) -> Void
