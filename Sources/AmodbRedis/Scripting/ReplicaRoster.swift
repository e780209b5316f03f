/// The replicas of a fleet that are alive: one sorted set, `<prefix>replicas`, each
/// replica's id scored by when it was last seen (Redis's own clock, in milliseconds, so
/// replicas' clocks need not agree). A replica beats every interval; one that misses a
/// lifetime of beats is no longer counted.
///
/// One script per beat, with bounded work whatever else the database holds: it adds this
/// replica, removes at most `maxRemovedPerBeat` members scored in the future, as many
/// expired ones and as many beyond `capacity`, and counts the live ones (`ZCOUNT`,
/// O(log N)). Nothing is ever scanned: a count that walked the keyspace would cost in
/// proportion to unrelated keys, and a server that never ends a cursor would never end
/// the walk.
///
/// The set is trusted no more than anything else in Redis: whoever can write to it can add
/// members. A beat scores a member with Redis's `now`, so a score more than
/// `clockSkewMilliseconds` ahead was written by no beat: it is never counted, removed a
/// share per beat, and no part of the capacity, so however many such members the set
/// holds they cannot push a live replica out (they would otherwise outrank every live one
/// and, beyond capacity, have the live ones trimmed as the oldest). Beyond capacity the
/// members scored after this beat go first, then the oldest, never one scored now: a
/// replica's own member is in the set and counted after each of its beats whatever the
/// others' scores. The count a beat returns is at most `maximumCount`. A member written with
/// a score within the window is a live one to the count until it expires: nothing tells it
/// from a replica's.
public struct ReplicaRoster: Sendable {
    /// The sorted set of replicas (member: a replica's id, score: when it was last seen, ms).
    public let key: String
    /// How long a replica counts after its last beat, in milliseconds.
    public let lifetimeMilliseconds: Int64
    /// How far ahead of Redis's now a score may be and still count, in milliseconds: Redis's
    /// clock stepping back a little between beats (NTP stepping it, a failover to a server
    /// whose clock differs slightly). A member further ahead is neither counted nor kept; a
    /// live replica's member pushed there by a larger step is written again at its next
    /// beat, so the count misses it for one interval at most.
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
    /// from a lifetime ago to the skew allowance ahead of now. `TIME` before writing is
    /// allowed under effects replication (the default since Redis 5; asked for explicitly
    /// where it is not).
    ///
    /// Capacity is checked against the live members alone (`ZCOUNT`), never `ZCARD`: members
    /// scored beyond the ceiling are removed only a share per beat, and counted in the size
    /// they would have the live ones trimmed. Beyond capacity the members scored after `now`
    /// go first, the furthest ahead first (`ZREVRANGEBYSCORE` from the ceiling to `(now`),
    /// then the oldest (`ZRANGEBYSCORE` to `(now`), so the member just written, scored `now`,
    /// is never trimmed.
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
        local ceiling = now + skew
        redis.call('ZADD', KEYS[1], now, ARGV[1])
        local ahead = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ceiling, '+inf', 'LIMIT', 0, most)
        if #ahead > 0 then
          redis.call('ZREM', KEYS[1], unpack(ahead))
        end
        local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. cutoff, 'LIMIT', 0, most)
        if #expired > 0 then
          redis.call('ZREM', KEYS[1], unpack(expired))
        end
        local live = redis.call('ZCOUNT', KEYS[1], cutoff, ceiling)
        if live > capacity then
          local excess = math.min(live - capacity, most)
          local early = redis.call('ZREVRANGEBYSCORE', KEYS[1], ceiling, '(' .. now, 'LIMIT', 0, excess)
          if #early > 0 then
            redis.call('ZREM', KEYS[1], unpack(early))
          end
          if excess > #early then
            local oldest = redis.call('ZRANGEBYSCORE', KEYS[1], cutoff, '(' .. now, 'LIMIT', 0, excess - #early)
            if #oldest > 0 then
              redis.call('ZREM', KEYS[1], unpack(oldest))
            end
          end
          live = redis.call('ZCOUNT', KEYS[1], cutoff, ceiling)
        end
        redis.call('PEXPIRE', KEYS[1], lifetime)
        return live
        """)
}
