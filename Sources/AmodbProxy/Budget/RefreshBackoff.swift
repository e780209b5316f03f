import Synchronization

/// Paths whose last refresh failed, until their back-off ends: their stale copy is served
/// (stale-if-error) without new attempts meanwhile.
///
/// Only refreshes are remembered (a path with nothing stored has nothing to serve in the
/// meantime), so the table follows the cache's entries, not what clients ask for; and it
/// holds at most `capacity` paths whatever happens: past it, ended back-offs are swept,
/// then the one ending soonest makes room.
final class RefreshBackoff: Sendable {
    /// One failed refresh.
    struct Failure: Sendable, Equatable {
        /// When new attempts may start again, in seconds since 1970.
        var until: Double
        /// amodb's status, when it answered.
        var fwdStatus: Int?
    }

    private let failures = Mutex<[String: Failure]>([:])
    private let capacity: Int

    /// A table of at most `capacity` paths.
    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// The failure of `key` whose back-off still runs at `now`.
    func failure(for key: String, now: Double) -> Failure? {
        failures.withLock { failures in
            guard let failure = failures[key] else { return nil }
            if now < failure.until { return failure }
            failures[key] = nil
            return nil
        }
    }

    /// Remembers a failed refresh of `key`.
    func record(_ failure: Failure, for key: String, now: Double) {
        failures.withLock { failures in
            if failures[key] == nil, failures.count >= capacity {
                failures = failures.filter { now < $0.value.until }
                if failures.count >= capacity, let soonest = failures.min(by: { $0.value.until < $1.value.until }) {
                    failures[soonest.key] = nil
                }
            }
            failures[key] = failure
        }
    }

    /// Forgets `key` (its refresh succeeded).
    func clear(_ key: String) {
        failures.withLock { failures in
            if !failures.isEmpty { failures[key] = nil }
        }
    }

    /// Paths remembered now.
    var count: Int { failures.withLock { $0.count } }
}
