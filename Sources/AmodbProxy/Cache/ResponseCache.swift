/// Where stored answers live, keyed by the canonical path and query relative to the
/// API root (`/movie/550?language=de-DE`). Behind a protocol so a shared cache
/// (Redis, for several replicas) can take the in-memory one's place.
public protocol ResponseCache: Sendable {
    /// The entry stored under `key`, fresh or not; counts as a use for eviction.
    func entry(for key: String) -> CachedResponse?
    /// Stores (or replaces) the entry under `key`.
    func store(_ entry: CachedResponse, for key: String)
    /// How many entries and body bytes are held.
    var usage: (entries: Int, bytes: Int) { get }
    /// Every entry, for a snapshot on disk.
    func allEntries() -> [(key: String, entry: CachedResponse)]
}
