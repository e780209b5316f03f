import Synchronization

/// The in-process cache: a fixed number of shards, each a dictionary behind its own
/// `Mutex`, so requests for different paths rarely wait on each other and a hit is
/// one hash, one short lock and one copy of a reference-counted array.
///
/// Memory is bounded by a byte budget: beyond it, a shard drops its least recently
/// used entries. Stores are rare (bounded by amodb's rate limit), so eviction scans.
public final class MemoryResponseCache: ResponseCache {
    private struct Slot {
        var entry: CachedResponse
        var lastUsed: UInt64
    }

    private struct Shard {
        var slots: [String: Slot] = [:]
        var bytes = 0
        var clock: UInt64 = 0

        mutating func tick() -> UInt64 {
            clock &+= 1
            return clock
        }
    }

    /// `Mutex` cannot live in an array (it is not copyable); a class holds each one.
    private final class LockedShard: Sendable {
        let state = Mutex(Shard())
    }

    private let shards: [LockedShard]
    private let bytesPerShard: Int

    /// A cache holding at most about `maxBytes` of bodies.
    public init(maxBytes: Int = ProxyConfiguration.defaults.cacheMaxBytes, shardCount: Int = 16) {
        shards = (0..<shardCount).map { _ in LockedShard() }
        bytesPerShard = max(1, maxBytes / shardCount)
    }

    private func shard(for key: String) -> LockedShard {
        var hasher = Hasher()
        hasher.combine(key)
        return shards[Int(UInt(bitPattern: hasher.finalize()) % UInt(shards.count))]
    }

    public func entry(for key: String) -> CachedResponse? {
        shard(for: key).state.withLock { shard in
            guard let index = shard.slots.index(forKey: key) else { return nil }
            shard.slots.values[index].lastUsed = shard.tick()   // one hash lookup for the hit
            return shard.slots.values[index].entry
        }
    }

    public func store(_ entry: CachedResponse, for key: String) {
        let limit = bytesPerShard
        shard(for: key).state.withLock { shard in
            let slot = Slot(entry: entry, lastUsed: shard.tick())
            if let old = shard.slots.updateValue(slot, forKey: key) { shard.bytes -= old.entry.body.count }
            shard.bytes += entry.body.count
            while shard.bytes > limit, shard.slots.count > 1,
                  let victim = shard.slots.min(by: { $0.value.lastUsed < $1.value.lastUsed }), victim.key != key {
                shard.slots[victim.key] = nil
                shard.bytes -= victim.value.entry.body.count
            }
        }
    }

    public var usage: (entries: Int, bytes: Int) {
        shards.reduce(into: (0, 0)) { total, shard in
            shard.state.withLock {
                total.0 += $0.slots.count
                total.1 += $0.bytes
            }
        }
    }

    public func allEntries() -> [(key: String, entry: CachedResponse)] {
        shards.flatMap { shard in
            shard.state.withLock { $0.slots.map { (key: $0.key, entry: $0.value.entry) } }
        }
    }
}
