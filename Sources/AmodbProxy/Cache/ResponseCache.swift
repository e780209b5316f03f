/// Where stored answers live, keyed by the canonical path and query relative to the
/// API root (`/movie/550?language=de-DE`). Behind a protocol so a shared cache
/// (Redis, for several replicas) can take the in-memory one's place.
///
/// `entry(for:)` is the hit path and stays synchronous: a shared implementation answers
/// it from a local copy and does its network work in `store` and on misses.
package protocol ResponseCache: Sendable {
    /// The entry stored under `key`, fresh or not; counts as a use for eviction.
    func entry(for key: String) -> CachedResponse?
    /// Stores (or replaces) the entry under `key`; `false` when the cache refuses it
    /// (larger than it keeps).
    @discardableResult
    func store(_ entry: CachedResponse, for key: String) -> Bool
    /// Whether `store` would keep an entry holding `byteCount` bytes (its body and every
    /// variant) under `key` (`false`: larger than it keeps).
    func admits(byteCount: Int, for key: String) -> Bool
    /// How many entries and bytes are held (bodies, keys and each entry's overhead).
    var usage: (entries: Int, bytes: Int) { get }
    /// Every entry, for a snapshot on disk.
    func allEntries() -> [(key: String, entry: CachedResponse)]
    /// When the oldest entry held was stored (seconds since 1970), for the status page; `nil` when empty.
    var oldestStoredAt: Double? { get }
}

extension ResponseCache {
    /// From every entry: a cache that can find its oldest without copying them says so itself.
    package var oldestStoredAt: Double? {
        allEntries().lazy.map(\.entry.storedAt).min()
    }

    /// Whether `store` would keep `entry` under `key` (`false`: larger than it keeps).
    package func admits(_ entry: CachedResponse, for key: String) -> Bool {
        admits(byteCount: entry.byteCount, for: key)
    }
}
