import AmodbModels

/// The cache decision stage: what a stored entry can do for a request, decided from the
/// entry, the time and the policy alone (as Envoy's cache filter has its `CachePolicy`
/// decide before anything is fetched). No lock, no lookup, no allocation: the hit path
/// runs it for every request that found an entry.
///
/// - `fresh`: answered at once (a hit, or a remembered 404);
/// - `stale`: a 200 within its route's max-stale whose last refresh failed while its
///   back-off runs: answered at once, no new attempt (stale-if-error, RFC 5861 §4);
/// - `revalidate`: a 200 within its route's max-stale: answered at once while one refresh
///   runs (stale-while-revalidate, RFC 5861 §3);
/// - `miss`: nothing usable; the fill stage asks amodb.
enum CacheDecision: Sendable, Equatable {
    /// Fresh for `ttl` more whole seconds.
    case fresh(ttl: Int)
    /// Stale (`ttl` ≤ 0 whole seconds of freshness left) and served as it is, its refresh
    /// backing off after amodb failed (`fwdStatus`: amodb's status, when it answered).
    case stale(ttl: Int, fwdStatus: Int?)
    /// Stale (`ttl` ≤ 0) and served while it is refreshed. `overdue`: older than twice its
    /// lifetime, so its refresh goes ahead of the misses waiting for a call, and popular
    /// pages do not drift.
    case revalidate(ttl: Int, overdue: Bool)
    /// Nothing usable.
    case miss

    /// The decision for `entry` (`nil`: none stored) of `route` at `now` under `freshness`.
    /// `refreshFailure` is asked only for a stale entry: the failed refresh whose back-off
    /// still runs, if any (`RefreshBackoff`).
    init(
        _ entry: CachedResponse?, of route: Route, at now: Double, freshness: Freshness,
        refreshFailure: () -> RefreshBackoff.Failure?
    ) {
        guard let entry else {
            self = .miss
            return
        }
        if entry.isFresh(at: now) {
            self = .fresh(ttl: entry.remainingLifetime(at: now))
            return
        }
        // Only a 200 is served stale: a remembered 404 past its lifetime says nothing. A
        // miss-only route's answer is never refreshed: past its lifetime it is a miss.
        guard entry.status == 200, now - entry.storedAt < freshness.oldestStale(of: route),
            route.entry.budget == .refreshed
        else {
            self = .miss
            return
        }
        let ttl = entry.remainingLifetime(at: now)
        if let failure = refreshFailure() {
            self = .stale(ttl: ttl, fwdStatus: failure.fwdStatus)
        } else {
            self = .revalidate(ttl: ttl, overdue: now - entry.storedAt > 2 * entry.lifetime)
        }
    }

    /// Whether the entry can answer at all (anything but a miss).
    var isUsable: Bool { self != .miss }
}
