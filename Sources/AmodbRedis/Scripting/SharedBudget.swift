/// amodb's per-key budget kept in Redis, so every replica spends from one window: the
/// sliding 60 s window of `AMODB_RATE_LIMIT` (a refresh only while the window is at most
/// half spent; a miss may take every call), and a 429 closing the window for every replica
/// until its `Retry-After`, and amodb's own rate-limit headers, once one replica has read
/// them, binding every replica. The same rules as the proxy's in-memory `UpstreamBudget`,
/// decided atomically by one Lua script.
///
/// Time is the caller's (`now` in milliseconds), passed to the script rather than read
/// with `TIME` inside it: replicas' clocks are close enough for a 60 s window, and tests
/// can pin it.
public struct SharedBudget: Sendable {
    /// Who is asking, as in `UpstreamBudget.Priority`.
    public enum Priority: String, Sendable {
        /// Nobody waits on it: only while the window is at most half spent.
        case refresh
        /// A client waits on it: may use every call.
        case miss
    }

    /// The answer to a request for one call.
    public enum Decision: Sendable, Equatable {
        /// One call taken from the window: call amodb.
        case granted
        /// No call now; one may be possible after this many milliseconds.
        case denied(retryAfterMilliseconds: Int64)
    }

    /// The sorted set of calls in the window (member: a call's id, score: when, in ms).
    public let callsKey: String
    /// The time (ms) until which amodb's 429 keeps the window closed.
    public let closedKey: String
    /// A hash of what amodb's headers said: `limit`, `remaining`, `reset_at` (ms).
    public let upstreamKey: String
    /// Calls per window at most (`AMODB_RATE_LIMIT`).
    public let limit: Int
    /// The window, in milliseconds.
    public let windowMilliseconds: Int64
    private let client: RedisClient

    /// A budget under `prefix` (e.g. `amodb-proxy:`), shared by every replica using the same keys.
    public init(client: RedisClient, prefix: String, limit: Int, windowMilliseconds: Int64 = 60_000) {
        self.client = client
        self.callsKey = prefix + "budget:calls"
        self.closedKey = prefix + "budget:closed"
        self.upstreamKey = prefix + "budget:upstream"
        self.limit = max(1, limit)
        self.windowMilliseconds = windowMilliseconds
    }

    /// Takes one call from the fleet's window, or says how long until one could be had.
    /// `callID` must be unique per call (replica id and a counter): it is the member stored.
    public func acquire(_ priority: Priority, now: Int64, callID: String) async throws(RedisError) -> Decision {
        let reply = try await client.run(
            Self.script, keys: [callsKey, closedKey, upstreamKey],
            arguments: ["acquire", .integer(now), .integer(Int64(limit)), .integer(windowMilliseconds), .bulk(priority.rawValue), .bulk(callID)]
        )
        guard case .array(let fields) = reply, fields.count == 2, let granted = fields[0].integer, let wait = fields[1].integer else {
            throw .unexpectedReply(reply.description)
        }
        return granted == 1 ? .granted : .denied(retryAfterMilliseconds: wait)
    }

    /// amodb said 429 with `Retry-After`: no replica calls for `milliseconds` from `now`
    /// (a later close than the one in force wins; an earlier one changes nothing).
    public func close(forMilliseconds milliseconds: Int64, now: Int64) async throws(RedisError) {
        _ = try await client.run(
            Self.script, keys: [callsKey, closedKey, upstreamKey],
            arguments: ["close", .integer(now), .integer(Int64(limit)), .integer(windowMilliseconds), .integer(milliseconds)]
        )
    }

    /// What amodb's rate-limit headers said (parsed by the proxy, as `UpstreamBudget.observe`
    /// does): its `limit` per window, and how many calls `remaining` until `resetAt` (Unix ms;
    /// a window from `now` when absent). A stricter limit or a lower remaining count then
    /// binds every replica. `nil` leaves what is stored.
    public func observe(limit upstreamLimit: Int?, remaining: Int?, resetAt: Int64?, now: Int64) async throws(RedisError) {
        func optional(_ value: Int64?) -> RedisValue { value.map(RedisValue.integer) ?? .bulk("") }
        _ = try await client.run(
            Self.script, keys: [callsKey, closedKey, upstreamKey],
            arguments: ["observe", .integer(now), .integer(Int64(limit)), .integer(windowMilliseconds),
                        optional(upstreamLimit.map(Int64.init)), optional(remaining.map(Int64.init)), optional(resetAt)]
        )
    }

    /// Calls in the window ending at `now`, by every replica.
    public func used(now: Int64) async throws(RedisError) -> Int64 {
        let reply = try await client.send(["ZCOUNT", .bulk(callsKey), .bulk("(" + String(now - windowMilliseconds)), "+inf"])
        guard let count = reply.integer else { throw .unexpectedReply(reply.description) }
        return count
    }

    /// The whole decision in one script, so no two replicas can both take the last call.
    /// KEYS: calls, closed-until, upstream hash. ARGV: operation, now, limit, window, then for
    /// `acquire` the priority and the call's id, for `close` the milliseconds to stay closed,
    /// for `observe` amodb's limit, remaining and reset time ('' when absent).
    /// Replies `{1, 0}` (granted) or `{0, wait}` for `acquire`, `{0, 0}` otherwise.
    public static let script = RedisScript("""
        local now = tonumber(ARGV[2])
        local limit = tonumber(ARGV[3])
        local window = tonumber(ARGV[4])
        local closed = tonumber(redis.call('GET', KEYS[2]) or '0')
        if ARGV[1] == 'close' then
          local reopen = now + tonumber(ARGV[5])
          if reopen > closed then
            redis.call('SET', KEYS[2], reopen, 'PX', reopen - now)
          end
          return {0, 0}
        end
        if ARGV[1] == 'observe' then
          local upstreamLimit = tonumber(ARGV[5])
          local remaining = tonumber(ARGV[6])
          if upstreamLimit and upstreamLimit >= 1 then
            redis.call('HSET', KEYS[3], 'limit', upstreamLimit)
          end
          if remaining and remaining >= 0 then
            redis.call('HSET', KEYS[3], 'remaining', remaining, 'reset_at', tonumber(ARGV[7]) or (now + window))
          end
          redis.call('PEXPIRE', KEYS[3], 10 * window)
          return {0, 0}
        end
        if now < closed then
          return {0, closed - now}
        end
        redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
        local used = redis.call('ZCARD', KEYS[1])
        local upstream = redis.call('HMGET', KEYS[3], 'limit', 'remaining', 'reset_at')
        local effective = math.min(limit, tonumber(upstream[1]) or limit)
        local needed = 1
        if ARGV[5] == 'refresh' then
          needed = math.floor(effective / 2) + 1
        end
        local available = effective - used
        local remaining = tonumber(upstream[2])
        local resetAt = tonumber(upstream[3]) or 0
        local upstreamBound = false
        if remaining and now < resetAt and remaining < available then
          available = remaining
          upstreamBound = true
        end
        if available >= needed then
          redis.call('ZADD', KEYS[1], now, ARGV[6])
          redis.call('PEXPIRE', KEYS[1], window)
          if remaining then
            redis.call('HINCRBY', KEYS[3], 'remaining', -1)
          end
          return {1, 0}
        end
        if upstreamBound then
          return {0, math.max(1000, resetAt - now)}
        end
        -- The call whose leaving frees enough room is this far from the oldest.
        local index = math.max(0, math.min(used - 1, used - effective + needed - 1))
        local entry = redis.call('ZRANGE', KEYS[1], index, index, 'WITHSCORES')
        local frees = now + window
        if entry[2] then
          frees = tonumber(entry[2]) + window
        end
        return {0, math.max(1, frees - now)}
        """)
}
