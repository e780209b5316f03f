import AmodbModels
import Synchronization

/// Each client's share of the upstream calls for misses, kept in this process: a client (its
/// token and address, as `Caller.limitKey` names it) may cause at most `callsPerWindow` of
/// them in any sliding 60 s window, so made-up ids from one client cannot spend the budget
/// everyone's misses need. The in-memory `UpstreamBudget` takes a miss's call and its
/// client's share together (`take(_:now:with:)`); a fleet keeps the shares in Redis, and
/// each replica holds this one, of its part of the share, for when Redis is away.
///
/// Only calls made count: a miss the window refuses is not charged, so the times held in
/// all are at most the window's calls. The table holds at most `capacity` clients: past it,
/// clients with no call in the window are swept (at most once a second, so a flood of new
/// clients costs no scan per request); if every one is still active, a new client is let
/// through unrecorded (the window still holds the line).
final class CallerShare: Sendable {
    private struct State {
        /// When each client's calls in the window were made, oldest first.
        var calls: [String: [Double]] = [:]
        var lastSweep = -Double.infinity
    }

    /// Calls one client may cause per window.
    let callsPerWindow: Int
    private let capacity: Int
    private let state = Mutex(State())

    /// Clients whose share is tracked at most, by default.
    static let defaultCapacity = 10_000

    /// The calls per window that a share of `fraction` of `limit` gives each client (at least
    /// one), or `nil` for a fraction of 1 or more: no share limit.
    static func callsPerWindow(limit: Int, fraction: Double) -> Int? {
        guard fraction < 1 else { return nil }
        return max(1, (Double(limit) * fraction).checkedInt(.down, clampedTo: 1...max(1, limit)) ?? 1)
    }

    /// A share of `callsPerWindow` calls per window (at least one) for each of at most `capacity` clients.
    init(callsPerWindow: Int, capacity: Int = CallerShare.defaultCapacity) {
        self.callsPerWindow = max(1, callsPerWindow)
        self.capacity = max(1, capacity)
    }

    /// One call of `client`'s share together with the one `call` decides (the window's), in
    /// one step: when the share has none, `.shareSpent` and `call` is not asked; when `call`
    /// does not grant, its answer, and nothing is charged to the share.
    func take(_ client: String, now: Double, with call: () -> CallDecision) -> CallDecision {
        state.withLock { state in
            guard Self.admit(client, into: &state, capacity: capacity, now: now) else { return call() }
            var times = Self.current(state.calls[client] ?? [], now: now)
            if let wait = wait(times, now: now) {
                state.calls[client] = times
                return .shareSpent(retryAfter: wait)
            }
            let decision = call()
            if decision == .granted { times.append(now) }
            state.calls[client] = times.isEmpty ? nil : times
            return decision
        }
    }

    /// Where `client`'s share stands: the calls it has left, and when it has none, the wait
    /// until one of its calls leaves the window; takes nothing.
    func standing(of client: String, now: Double) -> ShareStanding {
        state.withLock { state in
            let times = Self.current(state.calls[client] ?? [], now: now)
            return ShareStanding(left: max(0, callsPerWindow - times.count), wait: wait(times, now: now))
        }
    }

    /// Clients remembered now.
    var count: Int { state.withLock { $0.calls.count } }

    /// The wait until `times` (the client's calls in the window) leave room for one more.
    private func wait(_ times: [Double], now: Double) -> Double? {
        guard times.count >= callsPerWindow else { return nil }
        return max(1, times[times.count - callsPerWindow] + UpstreamBudget.window - now)
    }

    /// `times` without the calls that have left the window ending at `now`.
    private static func current(_ times: [Double], now: Double) -> [Double] {
        times.filter { $0 > now - UpstreamBudget.window }
    }

    /// Whether `client` has, or may have, a place in the table (sweeping it when full).
    private static func admit(_ client: String, into state: inout State, capacity: Int, now: Double) -> Bool {
        guard state.calls[client] == nil, state.calls.count >= capacity else { return true }
        guard now - state.lastSweep >= 1 else { return false }
        state.lastSweep = now
        state.calls = state.calls.filter { ($0.value.last ?? 0) > now - UpstreamBudget.window }
        return state.calls.count < capacity
    }
}
