import Synchronization

/// The in-process cache: a fixed number of shards, each a dictionary behind its own
/// `Mutex`, so requests for different paths rarely wait on each other and a hit is
/// one hash, one short lock and one copy of a reference-counted array.
///
/// Memory is bounded by a byte budget; beyond it the shard drops its oldest entries.
public final class MemoryResponseCache: ResponseCache {
    private struct Shard {
        var entries: [String: CachedResponse] = [:]
        var bytes = 0
    }

    /// `Mutex` cannot live in an array (it is not copyable); a class holds each one.
    private final class LockedShard: Sendable {
        let state = Mutex(Shard())
    }

    private let shards: [LockedShard]
    private let bytesPerShard: Int

    /// A cache holding at most about `maxBytes` of bodies.
    public init(maxBytes: Int = 64 * 1024 * 1024, shardCount: Int = 16) {
        shards = (0..<shardCount).map { _ in LockedShard() }
        bytesPerShard = max(1, maxBytes / shardCount)
    }

    private func shard(for key: String) -> LockedShard {
        var hasher = Hasher()
        hasher.combine(key)
        return shards[Int(UInt(bitPattern: hasher.finalize()) % UInt(shards.count))]
    }

    public func entry(for key: String) -> CachedResponse? {
        shard(for: key).state.withLock { $0.entries[key] }
    }

    public func store(_ entry: CachedResponse, for key: String) {
        let limit = bytesPerShard
        shard(for: key).state.withLock { shard in
            if let old = shard.entries.updateValue(entry, forKey: key) { shard.bytes -= old.body.count }
            shard.bytes += entry.body.count
            while shard.bytes > limit, shard.entries.count > 1,
                  let oldest = shard.entries.min(by: { $0.value.storedAt < $1.value.storedAt }), oldest.key != key {
                shard.entries[oldest.key] = nil
                shard.bytes -= oldest.value.body.count
            }
        }
    }

    public var usage: (entries: Int, bytes: Int) {
        shards.reduce(into: (0, 0)) { total, shard in
            shard.state.withLock {
                total.0 += $0.entries.count
                total.1 += $0.bytes
            }
        }
    }
}
