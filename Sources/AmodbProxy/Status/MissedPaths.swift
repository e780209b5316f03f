import Synchronization

/// The paths that missed most often, for the status page: a bounded top list counted on
/// the miss path only (a miss already takes locks and calls amodb; a hit never comes here).
///
/// The Space-Saving algorithm (Metwally, Agrawal, El Abbadi, 2005): at most `capacity`
/// paths are tracked; a path not tracked when the table is full takes the place of the
/// least counted one and inherits its count, which its `overestimate` records. Any path
/// missed more than `total / capacity` times is in the table, and the counts of the
/// first few are exact while the traffic has a few hot paths, as an API's traffic does.
final class MissedPaths: Sendable {
    /// One tracked path.
    struct Entry: Sendable, Equatable {
        /// The cache key (`/movie/550?language=de-DE`): the path and query relative to `/3`.
        var path: String
        /// Misses counted for it (an upper bound: `overestimate` of them may be another path's).
        var misses: Int
        /// How many of `misses` it inherited when it took another path's place.
        var overestimate: Int
    }

    /// Most paths tracked; a key longer than `maxKeyBytes` is tracked by its prefix.
    let capacity: Int
    /// Longest key kept, in bytes (URLs are bounded by the head limit already; this bounds memory further).
    static let maxKeyBytes = 512

    private let state: Mutex<[String: Entry]>

    init(capacity: Int = 100) {
        self.capacity = max(1, capacity)
        state = Mutex([:])
    }

    /// Counts one miss of `key`.
    func record(_ key: String) {
        let key =
            key.utf8.count > Self.maxKeyBytes ? String(decoding: key.utf8.prefix(Self.maxKeyBytes), as: UTF8.self) : key
        state.withLock { table in
            if table[key] != nil {
                table[key]!.misses += 1
                return
            }
            guard table.count >= capacity else {
                table[key] = Entry(path: key, misses: 1, overestimate: 0)
                return
            }
            // Full: the least counted path gives its place. A linear scan of at most
            // `capacity` entries, on a miss only, which waits for amodb anyway.
            let least = table.values.min { $0.misses < $1.misses || ($0.misses == $1.misses && $0.path < $1.path) }!
            table[least.path] = nil
            table[key] = Entry(path: key, misses: least.misses + 1, overestimate: least.misses)
        }
    }

    /// The `count` paths missed most often, most first (ties by path).
    func top(_ count: Int) -> [Entry] {
        let entries = state.withLock { Array($0.values) }
        return Array(
            entries.sorted { $0.misses > $1.misses || ($0.misses == $1.misses && $0.path < $1.path) }.prefix(count))
    }
}
