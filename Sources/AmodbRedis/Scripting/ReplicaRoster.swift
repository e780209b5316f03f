/// The replicas of a fleet that are alive: one sorted set, `<prefix>replicas`, each
/// replica's id scored by when it was last seen (Redis's own clock, in milliseconds, so
/// replicas' clocks need not agree). A replica beats every interval; one that misses a
/// lifetime of beats is no longer counted.
///
/// One script per beat, with bounded work whatever else the database holds: it adds this
/// replica, removes at most `maxRemovedPerBeat` members scored in the future, as many
/// expired ones and as many of the oldest beyond `capacity`, and counts the live ones
/// (`ZCOUNT`, O(log N)). Nothing is ever scanned: a count that walked the keyspace would
/// cost in proportion to unrelated keys, and a server that never ends a cursor would never
/// end the walk.
///
/// The set is trusted no more than anything else in Redis: whoever can write to it can add
/// members. A beat scores a member with Redis's `now`, so a score further ahead than a
/// lifetime and `clockSkewMilliseconds` was written by no beat: it is neither counted nor
/// kept (such a member would otherwise never expire, and would outrank every live one).
/// Beyond capacity, only members older than this beat are dropped, oldest first, so a
/// replica's own member is in the set and counted after each of its beats whatever the
/// others' scores. The count a beat returns is at most `maximumCount`.
public struct ReplicaRoster: Sendable {
    /// The sorted set of replicas (member: a replica's id, score: when it was last seen, ms).
    public let key: String
    /// How long a replica counts after its last beat, in milliseconds.
    public let lifetimeMilliseconds: Int64
    /// How far Redis's clock may step back between beats, in milliseconds: a score up to a
    /// lifetime and this much ahead of now still counts (NTP stepping the clock, a failover
    /// to a server whose clock differs); one further ahead is removed.
    public let clockSkewMilliseconds: Int64
    /// Most replicas the set keeps; beyond, the longest unseen are dropped.
    public let capacity: Int
    /// Most members one beat removes of each kind (scored in the future, expired, beyond `capacity`).
    public let maxRemovedPerBeat: Int
    /// Most replicas a beat reports, however many the set holds: the count is as far as a
    /// writer of the set can move the caller's view of the fleet.
    public let maximumCount: Int
    private let client: RedisClient

    /// A roster under `prefix` (e.g. `amodb-proxy:`), shared by every replica using the same keys.
    public init(
        client: RedisClient, prefix: String, lifetimeMilliseconds: Int64, capacity: Int = 1024,
        maxRemovedPerBeat: Int = 64, clockSkewMilliseconds: Int64 = 1_000, maximumCount: Int = 1024
    ) {
        self.client = client
        self.key = prefix + "replicas"
        self.lifetimeMilliseconds = max(1, lifetimeMilliseconds)
        self.clockSkewMilliseconds = max(0, clockSkewMilliseconds)
        self.capacity = max(1, capacity)
        self.maxRemovedPerBeat = max(1, maxRemovedPerBeat)
        self.maximumCount = max(1, maximumCount)
    }

    /// Marks `replica` alive now; returns how many replicas are alive, it included, at most `maximumCount`.
    public func beat(_ replica: String) async throws(RedisError) -> Int {
        let reply = try await client.run(
            Self.script, keys: [key],
            arguments: [
                .bulk(replica), .integer(lifetimeMilliseconds), .integer(Int64(maxRemovedPerBeat)),
                .integer(Int64(capacity)), .integer(clockSkewMilliseconds),
            ])
        guard let count = reply.integer, count >= 1 else { throw .unexpectedReply(reply.description) }
        return min(Int(clamping: count), maximumCount)
    }

    /// Removes `replica` at once (it is shutting down), rather than after its lifetime.
    public func leave(_ replica: String) async throws(RedisError) {
        let reply = try await client.send(["ZREM", .bulk(key), .bulk(replica)])
        guard reply.integer != nil else { throw .unexpectedReply(reply.description) }
    }

    /// KEYS: the set. ARGV: the replica, its lifetime (ms), most members removed of each
    /// kind, capacity, clock skew allowed (ms). Replies the number of live replicas: scored
    /// from a lifetime ago to the ceiling. `TIME` before writing is allowed under effects
    /// replication (the default since Redis 5; asked for explicitly where it is not).
    ///
    /// Beyond capacity the members scored before `now` go, oldest first (`ZRANGEBYSCORE`
    /// to `(now`), not the lowest ranks: the member just written is scored `now`, and
    /// would be the lowest rank when others are scored ahead of it.
    public static let script = RedisScript(
        """
        if redis.replicate_commands then redis.replicate_commands() end
        local time = redis.call('TIME')
        local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
        local lifetime = tonumber(ARGV[2])
        local most = tonumber(ARGV[3])
        local capacity = tonumber(ARGV[4])
        local skew = tonumber(ARGV[5])
        local cutoff = now - lifetime
        local ceiling = now + lifetime + skew
        redis.call('ZADD', KEYS[1], now, ARGV[1])
        local ahead = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ceiling, '+inf', 'LIMIT', 0, most)
        if #ahead > 0 then
          redis.call('ZREM', KEYS[1], unpack(ahead))
        end
        local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. cutoff, 'LIMIT', 0, most)
        if #expired > 0 then
          redis.call('ZREM', KEYS[1], unpack(expired))
        end
        local size = redis.call('ZCARD', KEYS[1])
        if size > capacity then
          local oldest = redis.call(
            'ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. now, 'LIMIT', 0, math.min(size - capacity, most))
          if #oldest > 0 then
            redis.call('ZREM', KEYS[1], unpack(oldest))
          end
        end
        redis.call('PEXPIRE', KEYS[1], lifetime)
        return redis.call('ZCOUNT', KEYS[1], cutoff, ceiling)
        """)
}
