import AmodbModels
import Synchronization

/// Each client's share of the upstream calls for misses (9 §7): a client (a token, or an
/// address) may cause at most `callsPerWindow` of them in any sliding 60 s window, so
/// made-up ids from one client cannot spend the budget everyone's misses need.
///
/// The table holds at most `capacity` clients: past it, clients with no call in the
/// window are swept; if every one is still active, a new client is let through
/// unrecorded (the global budget still holds the line).
final class ClientUpstreamShare: Sendable {
    /// Calls one client may cause per window.
    let callsPerWindow: Int
    private let capacity: Int
    /// When each client's calls in the window were made, oldest first.
    private let calls = Mutex<[String: [Double]]>([:])

    /// A share of `fraction` of `limit` calls per window (at least one call) for each of
    /// at most `capacity` clients.
    init(limit: Int, fraction: Double, capacity: Int) {
        callsPerWindow = max(1, (Double(limit) * fraction).checkedInt(.down, clampedTo: 1...max(1, limit)) ?? 1)
        self.capacity = max(1, capacity)
    }

    /// Takes one call from `client`'s share: `nil`, or the seconds until one is free again.
    func take(_ client: String, now: Double) -> Double? {
        let window = UpstreamBudget.window
        return calls.withLock { calls in
            if calls[client] == nil, calls.count >= capacity {
                calls = calls.filter { ($0.value.last ?? 0) > now - window }
                if calls.count >= capacity { return nil }
            }
            var times = calls[client, default: []]
            times.removeAll { $0 <= now - window }
            if times.count >= callsPerWindow {
                calls[client] = times
                return max(1, times[0] + window - now)
            }
            times.append(now)
            calls[client] = times
            return nil
        }
    }

    /// Clients remembered now.
    var count: Int { calls.withLock { $0.count } }
}
