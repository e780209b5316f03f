/// The replicas of a fleet that are alive: one sorted set, `<prefix>replicas`, each
/// replica's id scored by when it was last seen (Redis's own clock, in milliseconds, so
/// replicas' clocks need not agree). A replica beats every interval; one that misses a
/// lifetime of beats is no longer counted.
///
/// One script per beat, with bounded work whatever else the database holds: it adds this
/// replica, removes at most `maxRemovedPerBeat` expired ones and at most as many beyond
/// `capacity` (oldest first), and counts the live ones (`ZCOUNT`, O(log N)). Nothing is
/// ever scanned: a count that walked the keyspace would cost in proportion to unrelated
/// keys, and a server that never ends a cursor would never end the walk.
public struct ReplicaRoster: Sendable {
    /// The sorted set of replicas (member: a replica's id, score: when it was last seen, ms).
    public let key: String
    /// How long a replica counts after its last beat, in milliseconds.
    public let lifetimeMilliseconds: Int64
    /// Most replicas the set keeps; beyond, the longest unseen are dropped.
    public let capacity: Int
    /// Most members one beat removes (expired, or beyond `capacity`).
    public let maxRemovedPerBeat: Int
    private let client: RedisClient

    /// A roster under `prefix` (e.g. `amodb-proxy:`), shared by every replica using the same keys.
    public init(
        client: RedisClient, prefix: String, lifetimeMilliseconds: Int64, capacity: Int = 1024,
        maxRemovedPerBeat: Int = 64
    ) {
        self.client = client
        self.key = prefix + "replicas"
        self.lifetimeMilliseconds = max(1, lifetimeMilliseconds)
        self.capacity = max(1, capacity)
        self.maxRemovedPerBeat = max(1, maxRemovedPerBeat)
    }

    /// Marks `replica` alive now; returns how many replicas are alive, it included.
    public func beat(_ replica: String) async throws(RedisError) -> Int {
        let reply = try await client.run(
            Self.script, keys: [key],
            arguments: [
                .bulk(replica), .integer(lifetimeMilliseconds), .integer(Int64(maxRemovedPerBeat)),
                .integer(Int64(capacity)),
            ])
        guard let count = reply.integer, count >= 1 else { throw .unexpectedReply(reply.description) }
        return Int(clamping: count)
    }

    /// Removes `replica` at once (it is shutting down), rather than after its lifetime.
    public func leave(_ replica: String) async throws(RedisError) {
        let reply = try await client.send(["ZREM", .bulk(key), .bulk(replica)])
        guard reply.integer != nil else { throw .unexpectedReply(reply.description) }
    }

    /// KEYS: the set. ARGV: the replica, its lifetime (ms), most members removed, capacity.
    /// Replies the number of live replicas. `TIME` before writing is allowed under effects
    /// replication (the default since Redis 5; asked for explicitly where it is not).
    public static let script = RedisScript(
        """
        if redis.replicate_commands then redis.replicate_commands() end
        local time = redis.call('TIME')
        local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
        local lifetime = tonumber(ARGV[2])
        local most = tonumber(ARGV[3])
        local capacity = tonumber(ARGV[4])
        local cutoff = now - lifetime
        redis.call('ZADD', KEYS[1], now, ARGV[1])
        local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. cutoff, 'LIMIT', 0, most)
        if #expired > 0 then
          redis.call('ZREM', KEYS[1], unpack(expired))
        end
        local size = redis.call('ZCARD', KEYS[1])
        if size > capacity then
          redis.call('ZREMRANGEBYRANK', KEYS[1], 0, math.min(size - capacity, most) - 1)
        end
        redis.call('PEXPIRE', KEYS[1], lifetime)
        return redis.call('ZCOUNT', KEYS[1], cutoff, '+inf')
        """)
}
