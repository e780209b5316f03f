import AmodbModels
import Synchronization

/// Each client's share of the upstream calls for misses: a client (its token and address,
/// as `ProxyResponder` names it) may cause at most `callsPerWindow` of them in any sliding
/// 60 s window, so made-up ids from one client cannot spend the budget everyone's misses need.
///
/// Only calls made count: a miss the budget then refuses is given back (`refund`), so
/// the times held in all are at most the budget's calls in a window plus the fetches in
/// flight. The table holds at most `capacity` clients: past it, clients with no call in
/// the window are swept (at most once a second, so a flood of new clients costs no scan
/// per request); if every one is still active, a new client is let through unrecorded
/// (the global budget still holds the line).
final class ClientUpstreamShare: Sendable {
    private struct State {
        /// When each client's calls in the window were made, oldest first.
        var calls: [String: [Double]] = [:]
        var lastSweep = -Double.infinity
    }

    /// Calls one client may cause per window.
    let callsPerWindow: Int
    private let capacity: Int
    private let state = Mutex(State())

    /// A share of `fraction` of `limit` calls per window (at least one call) for each of
    /// at most `capacity` clients.
    init(limit: Int, fraction: Double, capacity: Int) {
        callsPerWindow = max(1, (Double(limit) * fraction).checkedInt(.down, clampedTo: 1...max(1, limit)) ?? 1)
        self.capacity = max(1, capacity)
    }

    /// Takes one call from `client`'s share: `nil`, or the seconds until one is free again.
    func take(_ client: String, now: Double) -> Double? {
        let window = UpstreamBudget.window
        return state.withLock { state in
            if state.calls[client] == nil, state.calls.count >= capacity {
                guard now - state.lastSweep >= 1 else { return nil }
                state.lastSweep = now
                state.calls = state.calls.filter { ($0.value.last ?? 0) > now - window }
                if state.calls.count >= capacity { return nil }
            }
            var times = state.calls[client, default: []]
            times.removeAll { $0 <= now - window }
            if times.count >= callsPerWindow {
                state.calls[client] = times
                return max(1, times[0] + window - now)
            }
            times.append(now)
            state.calls[client] = times
            return nil
        }
    }

    /// Gives back `client`'s latest call: the budget refused it, so it was never made.
    func refund(_ client: String) {
        state.withLock { state in
            guard var times = state.calls[client], !times.isEmpty else { return }
            times.removeLast()
            state.calls[client] = times.isEmpty ? nil : times
        }
    }

    /// Clients remembered now.
    var count: Int { state.withLock { $0.calls.count } }
}
