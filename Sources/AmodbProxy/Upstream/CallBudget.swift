/// Who asks the budget for a call.
///
/// A stale entry can still be answered and a miss has nothing to answer with, so when the
/// window is tight the calls go to misses: a refresh waits for slack while its entry is
/// served stale.
public enum CallPriority: Sendable {
    /// Nobody waits on it (a refresh of a stale entry served meanwhile, a probe of a
    /// refused key): only from slack, while the window is at most half spent.
    case refresh
    /// A client waits on it (a miss, its retries after a 429, a refresh of an entry older
    /// than twice its lifetime): may use every call of the window.
    case miss
}

/// The budget's answer to a request for one call.
public enum CallDecision: Sendable, Equatable {
    case granted
    /// No call now; one may be possible after this many seconds.
    case denied(retryAfter: Double)
}

/// amodb's per-key budget of calls. Behind a protocol so a shared implementation (Redis,
/// for several replicas spending one key) can take the in-memory `UpstreamBudget`'s place.
/// Asked only on misses and refreshes, never on a cache hit.
///
/// Taking a call, adopting amodb's headers and a 429 are `async`: a shared implementation
/// asks Redis (tens of milliseconds at most), on a miss's or a refresh's task. The in-memory
/// one answers them synchronously, so it costs nothing more than before.
protocol CallBudget: Sendable {
    /// Calls per 60 s window at most.
    var limit: Int { get }
    /// Takes one call from the window, or says how long until one could be had.
    func acquire(_ priority: CallPriority, now: Double) async -> CallDecision
    /// Adopts amodb's rate-limit headers (lower-cased names); returns the names of those
    /// it ignored as unreadable or out of range.
    func observe(headers: [String: String], now: Double) async -> [String]
    /// amodb said 429: no calls for `seconds`.
    func exhaust(for seconds: Double, now: Double) async
    /// Calls granted in the current window (by this replica, for a shared budget).
    func used(now: Double) -> Int
}
