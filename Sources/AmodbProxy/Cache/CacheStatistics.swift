import Synchronization

/// Counters of what the cache and the budget did, for operators (metrics) and tests.
/// Each is an atomic of its own: counting takes no lock on the request path.
public final class CacheStatistics: Sendable {
    /// What is counted.
    public enum Counter: String, CaseIterable, Sendable {
        /// Answered from a fresh entry.
        case hit
        /// Answered from a fresh negative (404) entry.
        case negativeHit = "negative_hit"
        /// Needed amodb: nothing usable was stored.
        case miss
        /// Joined another request's fetch of the same path.
        case collapsed
        /// Answered from a stale entry while it was (or was about to be) refreshed.
        case staleWhileRevalidate = "stale_while_revalidate"
        /// Answered from a stale entry because amodb failed to refresh it.
        case staleIfError = "stale_if_error"
        /// Answered from a stale entry because the budget had no call for its refresh.
        case staleForBudget = "stale_budget"
        /// Background refreshes started.
        case refresh
        /// Calls the budget refused (a 503 or a stale answer followed).
        case budgetDenial = "budget_denial"
        /// Calls made to amodb, retries and key probes included.
        case upstreamCall = "upstream_call"
        /// Calls made to see whether amodb accepts a refused key again.
        case keyProbe = "key_probe"
        /// Misses refused because the client had used its share of the calls.
        case clientShareDenial = "client_share_denial"
    }

    private let hit = Atomic<Int>(0), negativeHit = Atomic<Int>(0), miss = Atomic<Int>(0)
    private let collapsed = Atomic<Int>(0), staleWhileRevalidate = Atomic<Int>(0), staleIfError = Atomic<Int>(0)
    private let staleForBudget = Atomic<Int>(0), refresh = Atomic<Int>(0), budgetDenial = Atomic<Int>(0)
    private let upstreamCall = Atomic<Int>(0), keyProbe = Atomic<Int>(0), clientShareDenial = Atomic<Int>(0)

    public init() {}

    /// Adds one.
    public func count(_ counter: Counter) {
        withCounter(counter) { _ = $0.add(1, ordering: .relaxed) }
    }

    /// The count so far.
    public func value(_ counter: Counter) -> Int {
        withCounter(counter) { $0.load(ordering: .relaxed) }
    }

    private func withCounter<R>(_ counter: Counter, _ body: (borrowing Atomic<Int>) -> R) -> R {
        switch counter {
        case .hit: body(hit)
        case .negativeHit: body(negativeHit)
        case .miss: body(miss)
        case .collapsed: body(collapsed)
        case .staleWhileRevalidate: body(staleWhileRevalidate)
        case .staleIfError: body(staleIfError)
        case .staleForBudget: body(staleForBudget)
        case .refresh: body(refresh)
        case .budgetDenial: body(budgetDenial)
        case .upstreamCall: body(upstreamCall)
        case .keyProbe: body(keyProbe)
        case .clientShareDenial: body(clientShareDenial)
        }
    }
}
