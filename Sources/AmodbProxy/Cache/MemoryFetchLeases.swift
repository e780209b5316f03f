import Synchronization

/// The in-process leases: one dictionary of waiters per path, behind one `Mutex`. Only
/// misses and refreshes take it. Bounded: at most `capacity` paths in flight at once
/// (a client chooses the paths it misses on); beyond it, a new path is refused until
/// a fetch ends.
final class MemoryFetchLeases: FetchLeases {
    private let waiting = Mutex<[String: [FetchWaiter]]>([:])
    private let capacity: Int

    /// Leases for at most `capacity` paths at once.
    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    func claim(_ key: String, cached: () -> CachedResponse?, waiter: FetchWaiter?) -> LeaseClaim {
        waiting.withLock { waiting in
            if let entry = cached() { return .cached(entry) }
            if waiting[key] != nil {
                if let waiter { waiting[key]!.append(waiter) }
                return .joined
            }
            if waiting.count >= capacity { return .refused(.tooManyFetches) }
            waiting[key] = []
            return .leads
        }
    }

    func release<Result>(_ key: String, commit: () -> Result) -> (Result, [FetchWaiter]) {
        waiting.withLock { waiting in
            let result = commit()
            return (result, waiting.removeValue(forKey: key) ?? [])
        }
    }

    var count: Int { waiting.withLock { $0.count } }

    /// One process: nobody else could have stored the answer.
    func lead(_ key: String, arrivedAt: Double) async -> FetchResult? { nil }

    /// One process: nobody else to tell.
    func share(_ key: String, _ result: FetchResult?) async {}

    /// One process: nobody else to tell.
    func shareVariants(_ key: String, _ entry: CachedResponse) async {}
}
