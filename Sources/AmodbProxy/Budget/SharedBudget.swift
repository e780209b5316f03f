import AmodbRedis

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
///
/// The window outlives Redis losing its data (`FLUSHALL`, a restart without persistence,
/// a failover to an empty replica): amodb still counts the calls of the last minute. The
/// window has an identity, when it was started (`windowKey`); a replica that finds it
/// missing or other than the one it last saw gets `.unseeded` and puts back the calls it
/// made in the last minute (`seed`: idempotent, since the members are the calls' own ids).
/// A window started again grants nothing until every replica seen alive has seeded it, or
/// until a replica's lifetime has passed (one that has not beaten by then is gone), so the
/// first replica back cannot spend what the others had already spent.
///
/// Each client may also have a share of the window's calls for misses, the fleet's: the
/// same script checks it with the window (`acquire(_:now:callID:window:share:)`), so a miss
/// its share refuses takes no call from the window, and a call the window refuses is not
/// charged to the share. A share is a sorted set of the client's calls, `<prefix>share:<name>`,
/// holding at most its calls per window and expiring a window after the client's last call:
/// only a call the window granted creates or renews one, so there are never more share keys
/// than calls in a window. The shares are not put back when Redis loses its data: a client
/// then starts a new share, and the window, put back, still holds the fleet to the limit.
struct SharedBudget: Sendable {
    /// Who is asking, as in `UpstreamBudget.Priority`.
    enum Priority: String, Sendable {
        /// Nobody waits on it: only while the window is at most half spent.
        case refresh
        /// A client waits on it: may use every call.
        case miss
    }

    /// The answer to a request for one call.
    enum Decision: Sendable, Equatable {
        /// One call taken from the window: call amodb.
        case granted
        /// One call taken as the probe after a 429's pause: the others wait for its answer (`reopen`).
        case probe
        /// No call now; one may be possible after this many milliseconds.
        case denied(retryAfterMilliseconds: Int64)
        /// The window is not the one the caller seeded (lost, or started again): `seed` it, then ask again.
        case unseeded
        /// The client's share is spent: no call taken; one of its calls leaves it after this many milliseconds.
        case shareSpent(retryAfterMilliseconds: Int64)
    }

    /// One client's share of the window's calls, as `acquire` checks it (made by `share(named:calls:)`).
    struct Share: Sendable, Equatable {
        /// Its sorted set of calls: `<prefix>share:<name>`.
        let key: String
        /// Calls the client may cause per window (at least 1).
        let calls: Int
    }

    /// A call this replica made, as `seed` puts it back.
    struct Call: Sendable, Equatable {
        /// Its id, as given to `acquire` (the member stored).
        var id: String
        /// When it was made, in milliseconds.
        var at: Int64

        /// A call `id` made at `at` (ms).
        init(id: String, at: Int64) {
            self.id = id
            self.at = at
        }
    }

    /// The sorted set of calls in the window (member: a call's id, score: when, in ms).
    let callsKey: String
    /// The time (ms) until which amodb's 429 keeps the window closed.
    let closedKey: String
    /// A hash of what amodb's headers said: `limit`, `remaining`, `reset_at` (ms).
    let upstreamKey: String
    /// A hash naming the window: `since` (when it was started, ms), `expected` (replicas
    /// that must seed it), `settled_by` (ms; from then on it grants whoever has seeded).
    let windowKey: String
    /// The set of replicas that have seeded the window since it was started.
    let seededKey: String
    /// Set by amodb's 429 until a probe came back: while it is, one call at a time.
    let pauseKey: String
    /// The id of the probe out after a 429's pause, expiring with the probe's time.
    let probeKey: String
    /// Calls per window at most (`AMODB_RATE_LIMIT`).
    let limit: Int
    /// The window, in milliseconds.
    let windowMilliseconds: Int64
    private let prefix: String
    private let client: RedisClient

    /// A budget under `prefix` (e.g. `amodb-proxy:`), shared by every replica using the same keys.
    init(client: RedisClient, prefix: String, limit: Int, windowMilliseconds: Int64 = 60_000) {
        self.client = client
        self.prefix = prefix
        self.callsKey = prefix + "budget:calls"
        self.closedKey = prefix + "budget:closed"
        self.upstreamKey = prefix + "budget:upstream"
        self.windowKey = prefix + "budget:window"
        self.seededKey = prefix + "budget:seeded"
        self.pauseKey = prefix + "budget:pause"
        self.probeKey = prefix + "budget:probe"
        self.limit = max(1, limit)
        self.windowMilliseconds = windowMilliseconds
    }

    private var keys: [String] { [callsKey, closedKey, upstreamKey, windowKey, seededKey, pauseKey, probeKey] }

    /// The longest client name a share key takes.
    static let longestClientName = 64

    /// The share of `calls` per window of the client named `name`, or `nil` when `name` is
    /// not 1 to `longestClientName` letters, digits, `-` or `_`: the key is the caller's name
    /// for the client (the proxy's is a keyed hash), never text a client chose.
    func share(named name: String, calls: Int) -> Share? {
        let safe = name.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2D
                || byte == 0x5F
        }
        guard safe, (1...Self.longestClientName).contains(name.utf8.count) else { return nil }
        return Share(key: prefix + "share:" + name, calls: max(1, calls))
    }

    /// Takes one call from the fleet's window, or says how long until one could be had.
    /// `callID` must be unique per call (replica id and a counter): it is the member stored.
    /// `window`: the window the caller seeded (`seed`'s answer); another gets `.unseeded`.
    /// `share`: the client's share, taken in the same step: when it is spent, `.shareSpent`
    /// and no call is taken; when the window refuses, the share is not charged.
    /// `probeMilliseconds`: how long a probe after a 429's pause may stay out before another may try.
    func acquire(
        _ priority: Priority, now: Int64, callID: String, window: Int64, share: Share? = nil,
        probeMilliseconds: Int64 = 30_000
    ) async throws(RedisError) -> Decision {
        let reply = try await client.run(
            Self.script, keys: keys + (share.map { [$0.key] } ?? []),
            arguments: [
                "acquire", .integer(now), .integer(Int64(limit)), .integer(windowMilliseconds),
                .bulk(priority.rawValue), .bulk(callID),
                .integer(window), .integer(Int64(share?.calls ?? 0)), .integer(max(1, probeMilliseconds)),
            ]
        )
        guard case .array(let fields) = reply, fields.count == 2, let granted = fields[0].integer,
            let wait = fields[1].integer
        else {
            throw .unexpectedReply(reply.description)
        }
        switch granted {
        case 1: return .granted
        case 2: return .unseeded
        case 3: return .shareSpent(retryAfterMilliseconds: wait)
        case 4: return .probe
        default: return .denied(retryAfterMilliseconds: wait)
        }
    }

    /// How many calls `share` has left now, and when it has none, how long until it has one
    /// again (ms); takes nothing. For a miss that would wait in line for the window: one
    /// whose client has no call left is refused at once, and one holds no more places than it has calls.
    func standing(_ share: Share, now: Int64) async throws(RedisError) -> (left: Int, wait: Int64?) {
        let reply = try await client.run(
            Self.script, keys: keys + [share.key],
            arguments: [
                "share", .integer(now), .integer(Int64(limit)), .integer(windowMilliseconds),
                .integer(Int64(share.calls)),
            ])
        guard case .array(let fields) = reply, fields.count == 2, let spent = fields[0].integer,
            let value = fields[1].integer
        else {
            throw .unexpectedReply(reply.description)
        }
        return spent == 3 ? (0, value) : (Int(clamping: value), nil)
    }

    /// Puts `calls` (this replica's, of the last window) back into the window, starting it
    /// if there is none; returns the window's start, for `acquire`. Idempotent: a call
    /// already there is not added again. Only calls within the window ending at `now` are
    /// added, at most `limit` of them, and the window keeps at most `limit` calls (the
    /// newest): a seed can never make it more than fully spent, as a fresh start would
    /// allow. `closedUntil` (ms): a 429's close this replica still keeps, put back too.
    /// `replicas`: how many replicas this one saw alive lately; a window this call starts
    /// waits for that many seeds, or `settleMilliseconds`, before it grants.
    func seed(
        _ calls: [Call], replica: String, replicas: Int, settleMilliseconds: Int64, closedUntil: Int64? = nil,
        now: Int64
    ) async throws(RedisError) -> Int64 {
        var arguments: [RedisValue] = [
            "seed", .integer(now), .integer(Int64(limit)), .integer(windowMilliseconds), .bulk(replica),
            .integer(Int64(max(1, replicas))), .integer(max(0, settleMilliseconds)), .integer(closedUntil ?? 0),
        ]
        for call in calls.suffix(limit) { arguments += [.integer(call.at), .bulk(call.id)] }
        let reply = try await client.run(Self.script, keys: keys, arguments: arguments)
        guard case .array(let fields) = reply, fields.count == 2, let since = fields[1].integer else {
            throw .unexpectedReply(reply.description)
        }
        return since
    }

    /// When the window now in Redis was started (ms), or `nil` when there is none, and the
    /// calls in it at `now` (every replica's, at most `limit`, newest last). Asked by every
    /// replica once a heartbeat, which also keeps the window's name alive: it expires only
    /// once no replica has asked for ten windows. The calls are what a replica puts back
    /// with its own should Redis lose the window: so a replica killed since is still counted.
    func windowState(now: Int64) async throws(RedisError) -> (since: Int64?, calls: [Call]) {
        let reply = try await client.run(
            Self.script, keys: keys,
            arguments: ["window", .integer(now), .integer(Int64(limit)), .integer(windowMilliseconds)])
        guard case .array(let fields) = reply, fields.count >= 2, fields.count % 2 == 0,
            let found = fields[0].integer, let since = fields[1].integer
        else {
            throw .unexpectedReply(reply.description)
        }
        var calls: [Call] = []
        for index in stride(from: 2, to: fields.count, by: 2) {
            guard let id = fields[index].string, let at = fields[index + 1].integer else {
                throw .unexpectedReply("a call in the window")
            }
            calls.append(Call(id: id, at: at))
        }
        return (found == 1 ? since : nil, calls)
    }

    /// amodb said 429 with `Retry-After`: no replica calls for `milliseconds` from `now`
    /// (a later close than the one in force wins; an earlier one changes nothing).
    func close(forMilliseconds milliseconds: Int64, now: Int64) async throws(RedisError) {
        _ = try await client.run(
            Self.script, keys: keys,
            arguments: [
                "close", .integer(now), .integer(Int64(limit)), .integer(windowMilliseconds), .integer(milliseconds),
            ]
        )
    }

    /// The call `callID` came back (or gave up) at `at` (ms): it counts from then, as amodb
    /// may have received it any time before (a call already gone from the window is not put back).
    func complete(_ callID: String, at: Int64) async throws(RedisError) {
        _ = try await client.run(
            Self.script, keys: keys,
            arguments: ["complete", .integer(at), .integer(Int64(limit)), .integer(windowMilliseconds), .bulk(callID)]
        )
    }

    /// The probe `callID` came back other than 429: every replica may call again. A probe
    /// that is not the one out (its time ran out and another took its turn) changes nothing.
    func reopen(probe callID: String, now: Int64) async throws(RedisError) {
        _ = try await client.run(
            Self.script, keys: keys,
            arguments: ["reopen", .integer(now), .integer(Int64(limit)), .integer(windowMilliseconds), .bulk(callID)]
        )
    }

    /// What amodb's rate-limit headers said (parsed by the proxy, as `UpstreamBudget.observe`
    /// does): its `limit` per window, and how many calls `remaining` until `resetAt` (Unix ms;
    /// a window from `now` when absent). A stricter limit or a lower remaining count then
    /// binds every replica. `nil` leaves what is stored.
    func observe(limit upstreamLimit: Int?, remaining: Int?, resetAt: Int64?, now: Int64) async throws(RedisError) {
        func optional(_ value: Int64?) -> RedisValue { value.map(RedisValue.integer) ?? .bulk("") }
        _ = try await client.run(
            Self.script, keys: keys,
            arguments: [
                "observe", .integer(now), .integer(Int64(limit)), .integer(windowMilliseconds),
                optional(upstreamLimit.map(Int64.init)), optional(remaining.map(Int64.init)), optional(resetAt),
            ]
        )
    }

    /// Calls in the window ending at `now`, by every replica.
    func used(now: Int64) async throws(RedisError) -> Int64 {
        let reply = try await client.send([
            "ZCOUNT", .bulk(callsKey), .bulk("(" + String(now - windowMilliseconds)), "+inf",
        ])
        guard let count = reply.integer else { throw .unexpectedReply(reply.description) }
        return count
    }

    /// The whole decision in one script, so no two replicas can both take the last call, nor
    /// a client's last call of its share.
    /// KEYS: calls, closed-until, upstream hash, window hash, seeded set, pause marker, probe,
    /// and for `acquire` with a share and `share` the client's share. ARGV: operation, now,
    /// limit, window, then for `acquire` the priority, the call's id, the window seeded, the
    /// client's calls per window (0: no share) and how long a probe may be out (ms); for
    /// `share` the client's calls per window; for `seed` the replica, the replicas expected,
    /// the settling time, a close kept (ms, 0: none), then pairs of a call's time and id; for
    /// `close` the milliseconds to stay closed; for `complete` the call's id (now: when it came
    /// back); for `reopen` the probe's id; for `observe`
    /// amodb's limit, remaining and reset time ('' when absent).
    /// Replies `{1, 0}` (granted), `{4, 0}` (granted as the probe), `{0, wait}`, `{2, 0}`
    /// (unseeded) or `{3, wait}` (share spent) for `acquire`, `{1, left}` or `{3, wait}` for
    /// `share`, `{1, since}` for `seed`, `{1, since, id, at, …}` or `{0, 0}` for `window`,
    /// `{0, 0}` otherwise.
    static let script = RedisScript(
        """
        local now = tonumber(ARGV[2])
        local limit = tonumber(ARGV[3])
        local window = tonumber(ARGV[4])
        local closed = tonumber(redis.call('GET', KEYS[2]) or '0')
        -- A 429 closes the window until `reopen`, then asks for a probe (KEYS[6], kept ten
        -- windows at most): the probe out (KEYS[7]) is dropped, a later one must go first.
        local function close(reopen)
          if reopen > now then
            redis.call('SET', KEYS[6], 1, 'PX', reopen - now + 10 * window)
            redis.call('DEL', KEYS[7])
          end
          if reopen > closed and reopen > now then
            redis.call('SET', KEYS[2], reopen, 'PX', reopen - now)
            closed = reopen
          end
        end
        if ARGV[1] == 'close' then
          close(now + tonumber(ARGV[5]))
          return {0, 0}
        end
        if ARGV[1] == 'complete' then
          redis.call('ZADD', KEYS[1], 'XX', 'GT', now, ARGV[5])
          redis.call('PEXPIRE', KEYS[1], window)
          return {0, 0}
        end
        if ARGV[1] == 'reopen' then
          if redis.call('GET', KEYS[7]) == ARGV[5] then
            redis.call('DEL', KEYS[6], KEYS[7])
          end
          return {0, 0}
        end
        -- A client's share (KEYS[8]) of `calls` per window: 0 and the calls left if it has
        -- one now, else how long until the call whose leaving frees one is out of the
        -- window. At most `calls` members are ever kept, so this work is bounded.
        local function shareWait(calls)
          redis.call('ZREMRANGEBYSCORE', KEYS[8], '-inf', now - window)
          local taken = redis.call('ZCARD', KEYS[8])
          if taken < calls then return 0, calls - taken end
          local entry = redis.call('ZRANGE', KEYS[8], taken - calls, taken - calls, 'WITHSCORES')
          return math.max(1, tonumber(entry[2]) + window - now), 0
        end
        if ARGV[1] == 'share' then
          local wait, left = shareWait(math.max(1, tonumber(ARGV[5])))
          if wait > 0 then return {3, wait} end
          return {1, left}
        end
        if ARGV[1] == 'window' then
          local since = redis.call('HGET', KEYS[4], 'since')
          if not since then return {0, 0} end
          redis.call('PEXPIRE', KEYS[4], 10 * window)
          local reply = {1, tonumber(since)}
          local calls = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. (now - window), '+inf', 'WITHSCORES')
          local first = math.max(1, #calls - 2 * limit + 1)
          for i = first, #calls, 2 do
            reply[#reply + 1] = calls[i]
            reply[#reply + 1] = tonumber(calls[i + 1])
          end
          return reply
        end
        if ARGV[1] == 'seed' then
          local since = redis.call('HGET', KEYS[4], 'since')
          if not since then
            since = ARGV[2]
            redis.call('DEL', KEYS[5])
            redis.call('HSET', KEYS[4], 'since', since, 'expected', ARGV[6], 'settled_by', now + tonumber(ARGV[7]))
          elseif tonumber(ARGV[6]) > tonumber(redis.call('HGET', KEYS[4], 'expected') or '1') then
            redis.call('HSET', KEYS[4], 'expected', ARGV[6])
          end
          redis.call('PEXPIRE', KEYS[4], 10 * window)
          close(tonumber(ARGV[8]))
          local last = math.min(#ARGV - 1, 8 + 2 * limit)
          for i = 9, last, 2 do
            local at = tonumber(ARGV[i])
            if at and at > now - window and at <= now then
              redis.call('ZADD', KEYS[1], 'GT', at, ARGV[i + 1])
            end
          end
          -- The oldest beyond the limit change no decision: a window spent stays spent
          -- until as many calls have left it either way.
          local size = redis.call('ZCARD', KEYS[1])
          if size > limit then
            redis.call('ZREMRANGEBYRANK', KEYS[1], 0, size - limit - 1)
          end
          redis.call('PEXPIRE', KEYS[1], window)
          redis.call('SADD', KEYS[5], ARGV[5])
          redis.call('PEXPIRE', KEYS[5], 2 * window)
          return {1, tonumber(since)}
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
        if redis.call('HGET', KEYS[4], 'since') ~= ARGV[7] then
          return {2, 0}
        end
        local share = tonumber(ARGV[8]) or 0
        if share > 0 then
          local wait = shareWait(share)
          if wait > 0 then return {3, wait} end
        end
        local settledBy = tonumber(redis.call('HGET', KEYS[4], 'settled_by') or '0')
        if now < settledBy and redis.call('SCARD', KEYS[5]) < tonumber(redis.call('HGET', KEYS[4], 'expected') or '1') then
          return {0, settledBy - now}
        end
        if now < closed then
          return {0, closed - now}
        end
        -- After a 429's pause, one call at a time until one comes back (`reopen`).
        local probing = redis.call('EXISTS', KEYS[6]) == 1
        if probing then
          local out = redis.call('PTTL', KEYS[7])
          if out > 0 then return {0, math.min(100, out)} end
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
          -- Charged to the client's share only now that the call is made; its key lives
          -- as long as the call counts.
          if share > 0 then
            redis.call('ZADD', KEYS[8], now, ARGV[6])
            redis.call('ZREMRANGEBYRANK', KEYS[8], 0, -share - 1)
            redis.call('PEXPIRE', KEYS[8], window)
          end
          if probing then
            redis.call('SET', KEYS[7], ARGV[6], 'PX', tonumber(ARGV[9]))
            return {4, 0}
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
