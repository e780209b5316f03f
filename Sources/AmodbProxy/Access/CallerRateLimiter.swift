import Synchronization

/// A token bucket per client (its token and address, as `Caller.limitKey` names it): a
/// client may burst up to `burst` requests, then `perMinute` a minute. Sharded, so clients
/// rarely share a lock.
///
/// The table is keyed by something a client chooses (its address, or one taken from a
/// trusted `X-Forwarded-For`), so it is bounded: past `capacity` buckets, those that
/// have refilled completely are swept (a new bucket would be the same), then others
/// until a quarter of the shard is free. A swept bucket that still owed tokens leaves
/// its debt in a fixed table of slots, under a fingerprint of its key, and that
/// client's next bucket starts from it: being swept gives no fresh burst. A slot keeps
/// the larger debt when two swept clients share it, and a client whose fingerprint is
/// not in its slot starts full, as it would have anyway: a flood of new keys can
/// neither drain other clients' slots nor wipe a greedy client's debt with small ones.
final class CallerRateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var updatedAt: Double
    }

    /// A swept client's debt: whose (a fingerprint of the key) and how much.
    private struct Debt {
        var fingerprint: UInt32
        var bucket: Bucket
    }

    private struct ShardState {
        /// By the client's key's hash, not the key: an entry is then 24 bytes with nothing
        /// on the heap, where a key such as `user:` and 16 hex digits took a string of its
        /// own (~150 bytes an entry in all, measured). The hash is the process's seeded
        /// `Hasher`, which no client can aim at: two clients share a bucket only by a 64-bit
        /// accident (about one chance in 10^10 among a full table's 65,536).
        var buckets: [UInt64: Bucket] = [:]
        /// Debts of swept buckets; `nil` while a slot is free. Empty until the shard's first
        /// sweep: most proxies never fill a shard, and the slots are 32 KiB a shard.
        var debts: [Debt?] = []
    }

    private final class Shard: Sendable {
        let state = Mutex(ShardState())
    }

    /// Requests a minute per client, on average.
    let perMinute: Double
    /// Requests a client may make at once.
    let burst: Double
    /// Most buckets held at once, all shards together.
    let capacity: Int
    private static let shardCount = 16
    /// Debt slots per shard (32 bytes each).
    fileprivate static let slotCount = 1024
    private let shards = (0..<CallerRateLimiter.shardCount).map { _ in Shard() }

    /// A limiter holding at most `capacity` buckets (24 bytes each, ~60 with the table's room).
    init(perMinute: Int, burst: Int, capacity: Int = 65_536) {
        self.perMinute = Double(perMinute)
        self.burst = Double(max(1, burst))
        self.capacity = max(Self.shardCount * 4, capacity)
    }

    /// Buckets held now (for tests and the memory bound).
    var bucketCount: Int {
        shards.reduce(0) { count, shard in count + shard.state.withLock { $0.buckets.count } }
    }

    /// Takes one request from `client`'s bucket; `nil` when allowed, else seconds to wait.
    func take(_ client: String, now: Double) -> Double? {
        let hash = Self.hash(client)
        let shard = shards[Int(hash % UInt64(Self.shardCount))]
        let rate = perMinute / 60
        let burst = self.burst
        let shardCapacity = capacity / Self.shardCount
        return shard.state.withLock { state in
            /// The bucket after this request, and the wait when it had none to give.
            func taken(_ bucket: Bucket) -> (Bucket, Double?) {
                var bucket = bucket
                bucket.tokens = Self.refilled(bucket, now: now, rate: rate, burst: burst)
                bucket.updatedAt = now
                guard bucket.tokens >= 1 else { return (bucket, (1 - bucket.tokens) / rate) }
                bucket.tokens -= 1
                return (bucket, nil)
            }
            // A client seen before is updated in place.
            if let index = state.buckets.index(forKey: hash) {
                let (bucket, wait) = taken(state.buckets.values[index])
                state.buckets.values[index] = bucket
                return wait
            }
            let (bucket, wait) = taken(Self.owed(by: hash, in: state) ?? Bucket(tokens: burst, updatedAt: now))
            state.buckets[hash] = bucket
            if state.buckets.count > shardCapacity {
                Self.sweep(&state, now: now, rate: rate, burst: burst, keep: shardCapacity * 3 / 4)
            }
            return wait
        }
    }

    /// Seconds `client` must wait before its bucket holds a request, or `nil` when it holds
    /// one now; takes nothing, and makes no bucket for a client that has none.
    func wait(_ client: String, now: Double) -> Double? {
        let hash = Self.hash(client)
        let shard = shards[Int(hash % UInt64(Self.shardCount))]
        let rate = perMinute / 60
        let burst = self.burst
        return shard.state.withLock { state in
            guard let bucket = state.buckets[hash] ?? Self.owed(by: hash, in: state) else { return nil }
            let tokens = Self.refilled(bucket, now: now, rate: rate, burst: burst)
            return tokens >= 1 ? nil : (1 - tokens) / rate
        }
    }

    /// Drops full buckets, then moves others (in the table's own order) to their debt
    /// slots until at most `keep` remain. Freeing a quarter of the shard at a time
    /// spreads a sweep's cost over the insertions that filled it. The survivors go into
    /// a new table: deleting a run of entries in table order from an open-addressing
    /// table in place leaves the rest clustered, and lookups then probe for microseconds.
    private static func sweep(_ state: inout ShardState, now: Double, rate: Double, burst: Double, keep: Int) {
        let owing = state.buckets.filter { refilled($0.value, now: now, rate: rate, burst: burst) < burst }
        var excess = owing.count - keep
        guard excess > 0 else {
            state.buckets = owing
            return
        }
        if state.debts.isEmpty { state.debts = Array(repeating: nil, count: slotCount) }
        var kept: [UInt64: Bucket] = [:]
        kept.reserveCapacity(keep + keep / 3)
        for (hash, bucket) in owing {
            guard excess > 0 else {
                kept[hash] = bucket
                continue
            }
            excess -= 1
            let slot = slot(hash)
            let owed = refilled(bucket, now: now, rate: rate, burst: burst)
            if let held = state.debts[slot], refilled(held.bucket, now: now, rate: rate, burst: burst) <= owed {
                continue
            }
            state.debts[slot] = Debt(fingerprint: fingerprint(hash), bucket: Bucket(tokens: owed, updatedAt: now))
        }
        state.buckets = kept
    }

    /// The debt a swept client left, if its slot still holds it.
    private static func owed(by hash: UInt64, in state: ShardState) -> Bucket? {
        guard !state.debts.isEmpty, let debt = state.debts[slot(hash)], debt.fingerprint == fingerprint(hash) else {
            return nil
        }
        return debt.bucket
    }

    private static func refilled(_ bucket: Bucket, now: Double, rate: Double, burst: Double) -> Double {
        min(burst, bucket.tokens + max(0, now - bucket.updatedAt) * rate)
    }

    private static func hash(_ client: String) -> UInt64 {
        var hasher = Hasher()
        hasher.combine(client)
        return UInt64(UInt(bitPattern: hasher.finalize()))
    }

    /// Bits 4–13 pick the slot (bits 0–3 picked the shard); the high half fingerprints.
    private static func slot(_ hash: UInt64) -> Int {
        Int(hash / UInt64(shardCount) % UInt64(slotCount))
    }

    private static func fingerprint(_ hash: UInt64) -> UInt32 {
        UInt32(truncatingIfNeeded: hash >> 32)
    }
}
