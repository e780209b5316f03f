import Synchronization

/// The in-process cache: a fixed number of shards, each a dictionary behind its own
/// `Mutex`, so requests for different paths rarely wait on each other and a hit is
/// one hash, one short lock and one copy of a reference-counted array.
///
/// Memory is bounded by a byte budget that counts each entry's body, its key and a fixed
/// per-entry overhead (`entryOverhead`), so many small entries (remembered 404s for
/// made-up ids) are held to it as surely as a few large ones. Beyond it, a shard drops
/// its least recently used entries. An entry larger than `maxEntryFraction` of the budget
/// (half a shard's share) is never stored, so no entry can hold a shard alone.
/// Stores are rare (bounded by amodb's rate limit), so eviction scans.
package final class MemoryResponseCache: ResponseCache {
    private struct Slot {
        var entry: CachedResponse
        var lastUsed: UInt64
    }

    /// A key with its hash, made once per lookup: it picks the shard and is the hash the
    /// shard's dictionary reads (a key is never hashed twice over its bytes).
    private struct HashedKey: Hashable {
        let text: String
        let hash: Int

        init(_ text: String) {
            var hasher = Hasher()
            hasher.combine(text)
            self.text = text
            hash = hasher.finalize()
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(hash)
        }

        static func == (left: HashedKey, right: HashedKey) -> Bool {
            left.hash == right.hash && left.text == right.text
        }
    }

    private struct Shard {
        var slots: [HashedKey: Slot] = [:]
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

    /// Bytes counted for each entry besides its body and key: the dictionary slot, the
    /// array and string headers, the entity tag. An estimate on the high side.
    package static let entryOverhead = 256
    /// The largest entry stored, as a fraction of the budget: 1/32 (2 MiB of 64 MiB).
    package static let maxEntryFraction = 32

    private let shards: [LockedShard]
    private let bytesPerShard: Int
    /// The largest entry (body, key and overhead) stored, in bytes.
    package let maxEntryBytes: Int

    /// A cache holding at most about `maxBytes` (bodies, keys and overhead).
    package init(maxBytes: Int = ProxyConfiguration.defaults.cacheMaxBytes, shardCount: Int = 16) {
        shards = (0..<max(1, shardCount)).map { _ in LockedShard() }
        bytesPerShard = max(1, maxBytes / max(1, shardCount))
        maxEntryBytes = min(maxBytes / Self.maxEntryFraction, bytesPerShard)
    }

    /// What an entry costs against the budget.
    static func cost(of entry: CachedResponse, key: String) -> Int {
        cost(ofByteCount: entry.byteCount, key: key)
    }

    /// What an entry holding `byteCount` bytes (body and variants) costs under `key`.
    static func cost(ofByteCount byteCount: Int, key: String) -> Int {
        byteCount + key.utf8.count + entryOverhead
    }

    private func shard(for key: HashedKey) -> LockedShard {
        shards[Int(UInt(bitPattern: key.hash) % UInt(shards.count))]
    }

    package func entry(for key: String) -> CachedResponse? {
        let key = HashedKey(key)
        return shard(for: key).state.withLock { shard in
            guard let index = shard.slots.index(forKey: key) else { return nil }
            shard.slots.values[index].lastUsed = shard.tick()  // one hash lookup for the hit
            return shard.slots.values[index].entry
        }
    }

    @discardableResult
    package func store(_ entry: CachedResponse, for key: String) -> Bool {
        let limit = bytesPerShard
        let cost = Self.cost(of: entry, key: key)
        guard cost <= maxEntryBytes else { return false }
        let hashed = HashedKey(key)
        shard(for: hashed).state.withLock { shard in
            let slot = Slot(entry: entry, lastUsed: shard.tick())
            if let old = shard.slots.updateValue(slot, forKey: hashed) {
                shard.bytes -= Self.cost(of: old.entry, key: key)
            }
            shard.bytes += cost
            // The new entry is at most half the shard's share: evicting others always makes room.
            while shard.bytes > limit,
                let victim = shard.slots.lazy.filter({ $0.key != hashed }).min(by: {
                    $0.value.lastUsed < $1.value.lastUsed
                })
            {
                shard.slots[victim.key] = nil
                shard.bytes -= Self.cost(of: victim.value.entry, key: victim.key.text)
            }
        }
        return true
    }

    package func admits(byteCount: Int, for key: String) -> Bool {
        Self.cost(ofByteCount: byteCount, key: key) <= maxEntryBytes
    }

    package var usage: (entries: Int, bytes: Int) {
        shards.reduce(into: (0, 0)) { total, shard in
            shard.state.withLock {
                total.0 += $0.slots.count
                total.1 += $0.bytes
            }
        }
    }

    /// One shard's lock at a time, each held for a scan of its entries without a copy.
    package var oldestStoredAt: Double? {
        shards.compactMap { shard in shard.state.withLock { $0.slots.values.lazy.map(\.entry.storedAt).min() } }.min()
    }

    package func allEntries() -> [(key: String, entry: CachedResponse)] {
        shards.flatMap { shard in
            shard.state.withLock { $0.slots.map { (key: $0.key.text, entry: $0.value.entry) } }
        }
    }
}
