import Synchronization

/// A token bucket per client (per token, or per address without tokens): a client may
/// burst up to `burst` requests, then `perMinute` a minute. Sharded, so clients rarely
/// share a lock; buckets that refilled completely are dropped when a shard grows large.
final class ClientRateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var updatedAt: Double
    }

    private final class Shard: Sendable {
        let buckets = Mutex<[String: Bucket]>([:])
    }

    /// Requests a minute per client, on average.
    let perMinute: Double
    /// Requests a client may make at once.
    let burst: Double
    private let shards = (0..<16).map { _ in Shard() }
    /// Buckets per shard before full ones are swept.
    private static let sweepThreshold = 4096

    init(perMinute: Int, burst: Int) {
        self.perMinute = Double(perMinute)
        self.burst = Double(max(1, burst))
    }

    /// Takes one request from `client`'s bucket; `nil` when allowed, else seconds to wait.
    func take(_ client: String, now: Double) -> Double? {
        var hasher = Hasher()
        hasher.combine(client)
        let shard = shards[Int(UInt(bitPattern: hasher.finalize()) % UInt(shards.count))]
        let rate = perMinute / 60
        let burst = self.burst
        return shard.buckets.withLock { buckets in
            var bucket = buckets[client] ?? Bucket(tokens: burst, updatedAt: now)
            bucket.tokens = min(burst, bucket.tokens + max(0, now - bucket.updatedAt) * rate)
            bucket.updatedAt = now
            let wait: Double?
            if bucket.tokens >= 1 {
                bucket.tokens -= 1
                wait = nil
            } else {
                wait = (1 - bucket.tokens) / rate
            }
            buckets[client] = bucket
            if buckets.count > Self.sweepThreshold {
                buckets = buckets.filter { $0.value.tokens + (now - $0.value.updatedAt) * rate < burst }
            }
            return wait
        }
    }
}
