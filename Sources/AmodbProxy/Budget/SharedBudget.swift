import AmodbRedis

/// The fleet's window of amodb calls, kept in Redis so every replica spends from one window:
/// the sliding 60 s window (a refresh only while it is at most half spent; a miss may take
/// every call), a 429 closing it for every replica until its `Retry-After` and one probe
/// after it, and amodb's own rate-limit headers, once one replica has read them, binding
/// every replica. The same rules as the proxy's in-memory `UpstreamBudget`, decided
/// atomically by one Lua script over two keys: the window's state (a hash) and its calls
/// (a sorted set), so that all of it lives in one place and is lost only together with the
/// calls it vouches for.
///
/// **One clock.** Every time the script judges by is Redis's (`TIME` inside the script),
/// never a replica's: a replica whose clock runs ahead cannot trim the others' calls out of
/// the window. Callers pass durations (a close's length, the age of a call they put back),
/// never instants.
///
/// **A call counts as late as amodb might see it.** A call is stored at the instant it was
/// granted plus `callTimeout` (amodb may receive it any time until then); when it comes back
/// (`complete`) it moves to that instant, and one the window had already dropped (its
/// replica froze between grant and send) is counted again from then.
///
/// **Lost state is detected, not assumed away.** The state carries an epoch (named when the
/// window was started), a sequence number bumped by every grant, the `run_id` of the Redis
/// process that last wrote it, and the latest instant any call counts until. Every
/// `acquire` and `window` passes the epoch and sequence number the replica last saw; the
/// script then treats the window as lost when
/// - there is no state at all but the replica remembers one (`FLUSHALL`, an evicted or
///   deleted key, a restart without persistence),
/// - the state was written by another Redis process (a restart, from an older snapshot or
///   not; a failover to a replica that may lack the last writes),
/// - its sequence number is smaller than the replica saw (an older snapshot),
/// - its epoch is not the one the replica saw and was started within the last window plus a
///   call's time (another replica started it again after a loss this one saw first), or
/// - calls should be in the window but the sorted set is gone (evicted or deleted alone).
/// A lost window grants nothing until a full window plus a call's time has passed since the
/// loss was seen (`lostUntil`): every call the lost state vouched for left amodb's window by
/// then. A window started by a replica that remembers none (a new fleet, or state lost
/// while only new replicas ran) settles first for `settle`, so that a replica that does
/// remember one has a heartbeat to mark it lost before anything is granted from it.
///
/// The window's part of the limit is `limit` here: the whole limit less the outage reserve,
/// which replicas spend on their own (see `RedisCallBudget`).
///
/// Each client may also have a share of the window's calls for misses, the fleet's: the
/// same script checks it with the window, so a miss its share refuses takes no call from the
/// window, and a call the window refuses is not charged to the share. A share is a sorted
/// set of the client's calls, `<prefix>share:<name>`, holding at most its calls per window
/// and expiring a window after the client's last call.
struct SharedBudget: Sendable {
    /// Who is asking, as in `UpstreamBudget.Priority`.
    enum Priority: String, Sendable {
        /// Nobody waits on it: only while the window is at most half spent.
        case refresh
        /// A client waits on it: may use every call.
        case miss
    }

    /// Why the window grants nothing for a while although it may have calls (its raw value:
    /// the script's reply code).
    enum Pause: Int64, Sendable, Equatable {
        /// Its state was lost (or may be older than what was seen): nothing is granted until a
        /// window and a call's time have passed since the loss.
        case lost = 5
        /// Started by a replica that remembers no window: settling, so that a replica that
        /// remembers one can mark it lost first.
        case settling = 6
    }

    /// The answer to a request for one call.
    enum Decision: Sendable, Equatable {
        /// One call taken from the window: call amodb.
        case granted
        /// One call taken as the probe after a 429's pause: the others wait for its answer (`reopen`).
        case probe
        /// No call now; one may be possible after this many milliseconds.
        case denied(retryAfterMilliseconds: Int64)
        /// The client's share is spent: no call taken; one of its calls leaves it after this many milliseconds.
        case shareSpent(retryAfterMilliseconds: Int64)
        /// The window grants nothing for this many milliseconds, for `Pause`'s reason.
        case paused(Pause, retryAfterMilliseconds: Int64)
    }

    /// What a replica last saw of the window: it passes this back so the script can tell a
    /// window that was lost or rolled back.
    struct Seen: Sendable, Equatable {
        /// The window's epoch (empty: this replica has seen none).
        var epoch: String
        /// Its sequence number then.
        var sequence: Int64

        /// Nothing seen: a new replica.
        static let nothing = Seen(epoch: "", sequence: 0)
    }

    /// One client's share of the window's calls, as `acquire` checks it (made by `share(named:calls:)`).
    struct Share: Sendable, Equatable {
        /// Its sorted set of calls: `<prefix>share:<name>`.
        let key: String
        /// Calls the client may cause per window (at least 1).
        let calls: Int
    }

    /// A call a replica made without the window (from its reserve), as it puts it back:
    /// its id and how long ago amodb may have seen it, in milliseconds.
    struct PutBack: Sendable, Equatable {
        var id: String
        var ageMilliseconds: Int64
    }

    /// The hash of the window's state: `epoch`, `seq`, `run`, `last`, `started`,
    /// `lost_until`, `pause`, `closed`, `probing`, `probe`, `limit`, `remaining`, `reset_at`.
    let stateKey: String
    /// The sorted set of calls in the window (member: a call's id, score: until when, in Redis ms).
    let callsKey: String
    /// Calls per window this window grants at most (`AMODB_RATE_LIMIT` less the reserve).
    let limit: Int
    /// The window, in milliseconds.
    let windowMilliseconds: Int64
    /// The longest a call to amodb can take, in milliseconds.
    let callTimeoutMilliseconds: Int64
    /// How long a window started by a replica that remembers none settles, in milliseconds.
    let settleMilliseconds: Int64
    private let prefix: String
    private let client: RedisClient

    /// A window under `prefix` (e.g. `amodb-proxy:`), shared by every replica using the same keys.
    init(
        client: RedisClient, prefix: String, limit: Int, windowMilliseconds: Int64 = 60_000,
        callTimeoutMilliseconds: Int64 = 32_000, settleMilliseconds: Int64 = 3_000
    ) {
        self.client = client
        self.prefix = prefix
        self.stateKey = prefix + "budget:state"
        self.callsKey = prefix + "budget:calls"
        self.limit = max(0, limit)
        self.windowMilliseconds = max(1, windowMilliseconds)
        self.callTimeoutMilliseconds = max(0, callTimeoutMilliseconds)
        self.settleMilliseconds = max(0, settleMilliseconds)
    }

    private var keys: [String] { [stateKey, callsKey] }

    /// The arguments every operation starts with.
    private func common(_ operation: String, seen: Seen = .nothing, replica: String = "") -> [RedisValue] {
        [
            .bulk(operation), .integer(Int64(limit)), .integer(windowMilliseconds), .integer(callTimeoutMilliseconds),
            .integer(settleMilliseconds), .bulk(seen.epoch), .integer(seen.sequence), .bulk(replica),
        ]
    }

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

    /// Takes one call from the fleet's window, or says why not and for how long.
    /// `callID` must be unique per call (replica id and a counter): it is the member stored.
    /// `seen`: what this replica last saw of the window (`Seen.nothing` for a new replica).
    /// `share`: the client's share, taken in the same step. `probeMilliseconds`: how long a
    /// probe after a 429's pause may stay out before another may try. Returns the decision
    /// and what the replica now sees of the window.
    func acquire(
        _ priority: Priority, callID: String, seen: Seen, replica: String, share: Share? = nil,
        probeMilliseconds: Int64 = 30_000
    ) async throws(RedisError) -> (decision: Decision, seen: Seen) {
        let reply = try await client.run(
            Self.script, keys: keys + (share.map { [$0.key] } ?? []),
            arguments: common("acquire", seen: seen, replica: replica) + [
                .bulk(priority.rawValue), .bulk(callID), .integer(Int64(share?.calls ?? 0)),
                .integer(max(1, probeMilliseconds)),
            ]
        )
        let (code, wait, now) = try Self.read(reply)
        let decision: Decision =
            switch code {
            case 1: .granted
            case 3: .shareSpent(retryAfterMilliseconds: wait)
            case 4: .probe
            case 5: .paused(.lost, retryAfterMilliseconds: wait)
            case 6: .paused(.settling, retryAfterMilliseconds: wait)
            default: .denied(retryAfterMilliseconds: wait)
            }
        return (decision, now)
    }

    /// Reads a reply `{code, wait, epoch, seq}`.
    private static func read(_ reply: RedisValue) throws(RedisError) -> (Int64, Int64, Seen) {
        guard case .array(let fields) = reply, fields.count == 4, let code = fields[0].integer,
            let wait = fields[1].integer, let epoch = fields[2].string, let sequence = fields[3].integer
        else {
            throw .unexpectedReply(reply.description)
        }
        return (code, wait, Seen(epoch: epoch, sequence: sequence))
    }

    /// How many calls `share` has left now, and when it has none, how long until it has one
    /// again (ms); takes nothing.
    func standing(_ share: Share) async throws(RedisError) -> (left: Int, wait: Int64?) {
        let reply = try await client.run(
            Self.script, keys: keys + [share.key], arguments: common("share") + [.integer(Int64(share.calls))])
        let (code, value, _) = try Self.read(reply)
        return code == 3 ? (0, value) : (Int(clamping: value), nil)
    }

    /// Once a heartbeat: checks the window against what this replica `seen` (marking it lost
    /// when it was), puts back `calls` this replica made from its reserve (idempotent by id),
    /// and keeps a 429's close this replica still holds (`closedMilliseconds` from now).
    /// Returns why the window grants nothing now, if it does not, for how long, and what the
    /// replica now sees of it.
    func window(
        seen: Seen, replica: String, putBack calls: [PutBack] = [], closedMilliseconds: Int64 = 0
    ) async throws(RedisError) -> (pause: Pause?, wait: Int64, seen: Seen) {
        var arguments = common("window", seen: seen, replica: replica) + [.integer(max(0, closedMilliseconds))]
        for call in calls.suffix(Self.longestPutBack) {
            arguments += [.integer(max(0, call.ageMilliseconds)), .bulk(call.id)]
        }
        let (code, wait, now) = try Self.read(try await client.run(Self.script, keys: keys, arguments: arguments))
        return (Pause(rawValue: code), wait, now)
    }

    /// The most calls one `window` puts back.
    static let longestPutBack = 1_000

    /// amodb said 429 with `Retry-After`: no replica calls for `milliseconds` from now (a
    /// later close than the one in force wins; an earlier one changes nothing).
    func close(forMilliseconds milliseconds: Int64) async throws(RedisError) {
        _ = try await client.run(Self.script, keys: keys, arguments: common("close") + [.integer(milliseconds)])
    }

    /// The call `callID` came back now, or was given up with no answer: it counts from now
    /// plus `laterMilliseconds` (a call's time for one given up, which amodb may still read),
    /// as amodb may have received it any time before; one already gone from the window is
    /// counted again.
    func complete(_ callID: String, laterMilliseconds: Int64) async throws(RedisError) {
        _ = try await client.run(
            Self.script, keys: keys, arguments: common("complete") + [.bulk(callID), .integer(laterMilliseconds)])
    }

    /// The probe `callID` came back other than 429: every replica may call again. A probe
    /// that is not the one out (its time ran out and another took its turn) changes nothing.
    func reopen(probe callID: String) async throws(RedisError) {
        _ = try await client.run(Self.script, keys: keys, arguments: common("reopen") + [.bulk(callID)])
    }

    /// What amodb's rate-limit headers said (parsed by the proxy, as `UpstreamBudget.observe`
    /// does): its `limit` per window, and how many calls `remaining` for `resetMilliseconds`
    /// from now (a window when absent). A stricter limit or a lower remaining count then binds
    /// every replica. `nil` leaves what is stored.
    func observe(limit upstreamLimit: Int?, remaining: Int?, resetMilliseconds: Int64?) async throws(RedisError) {
        func optional(_ value: Int64?) -> RedisValue { value.map(RedisValue.integer) ?? .bulk("") }
        _ = try await client.run(
            Self.script, keys: keys,
            arguments: common("observe") + [
                optional(upstreamLimit.map(Int64.init)), optional(remaining.map(Int64.init)),
                optional(resetMilliseconds),
            ]
        )
    }

    /// Calls in the window now, by every replica.
    func used() async throws(RedisError) -> Int64 {
        let (_, used, _) = try Self.read(try await client.run(Self.script, keys: keys, arguments: common("used")))
        return used
    }

    /// The whole decision in one script, so no two replicas can both take the last call, nor
    /// a client's last call of its share.
    /// KEYS: the state hash, the calls, and for `acquire` with a share and `share` the
    /// client's share. ARGV: operation, limit, window (ms), call timeout (ms), settle (ms),
    /// the epoch and sequence number the caller saw, the caller's replica id; then for
    /// `acquire` the priority, the call's id, the client's calls per window (0: no share) and
    /// how long a probe may be out (ms); for `share` the client's calls per window; for
    /// `window` a close the caller keeps (ms from now, 0: none) then pairs of a call's age
    /// (ms) and id; for `close` the milliseconds to stay closed; for `complete` the call's
    /// id and how long after now it counts from (ms: a call's time for one that got no
    /// answer); for `reopen` the probe's id; for `observe` amodb's limit, remaining and reset (ms
    /// from now; '' when absent).
    /// Every reply is `{code, value, epoch, seq}`: for `acquire` code 1 granted, 4 granted
    /// as the probe, 0 denied (value: ms to wait), 3 share spent (ms), 5 lost or 6 settling
    /// (ms until it grants again); for `window` 0, 5 or 6 likewise; for `share` 1 (value:
    /// calls left) or 3 (ms); for `used` the calls in the window.
    static let script = RedisScript(
        """
        local op = ARGV[1]
        local limit = tonumber(ARGV[2])
        local window = tonumber(ARGV[3])
        local timeout = tonumber(ARGV[4])
        local settle = tonumber(ARGV[5])
        local seenEpoch = ARGV[6]
        local seenSeq = tonumber(ARGV[7]) or 0
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        local S = KEYS[1]
        local C = KEYS[2]
        local function num(field) return tonumber(redis.call('HGET', S, field) or '0') or 0 end
        local function reply(code, value)
          return {code, value, redis.call('HGET', S, 'epoch') or '', num('seq')}
        end
        -- The Redis process writing now: state another one wrote may lack its last writes.
        local function runID()
          local ok, info = pcall(redis.call, 'INFO', 'server')
          if not ok or type(info) ~= 'string' then return '' end
          return string.match(info, 'run_id:(%x+)') or ''
        end
        local function lose(untilAt)
          local seq = math.max(num('seq'), seenSeq) + 1
          redis.call('HSET', S, 'seq', seq, 'pause', 1, 'lost_until', math.max(num('lost_until'), untilAt))
        end
        -- Judges the state against what the caller saw; starts a window when there is none.
        local function check()
          local run = runID()
          local epoch = redis.call('HGET', S, 'epoch')
          if not epoch then
            -- A 429's close or amodb's headers written meanwhile are kept.
            redis.call('HSET', S, 'epoch', now .. '-' .. ARGV[8], 'seq', seenSeq + 1, 'run', run, 'started', now, 'last', 0)
            if seenEpoch ~= '' then
              redis.call('HSET', S, 'pause', 1, 'lost_until', now + window + timeout)
            else
              redis.call('HSET', S, 'pause', 2, 'lost_until', now + settle)
            end
            return
          end
          if redis.call('HGET', S, 'run') ~= run then
            lose(now + window + timeout)
            redis.call('HSET', S, 'run', run)
          elseif seenEpoch == epoch and num('seq') < seenSeq then
            lose(now + window + timeout)
          elseif seenEpoch ~= '' and seenEpoch ~= epoch and now < num('started') + window + timeout then
            lose(num('started') + window + timeout)
          elseif num('last') > now - window and redis.call('EXISTS', C) == 0 then
            lose(num('last') + window)
          end
        end
        local function pausedFor()
          local untilAt = num('lost_until')
          if now < untilAt then return untilAt - now, (num('pause') == 2) and 6 or 5 end
          return 0, 0
        end
        -- A 429 closes the window until `reopen`, then asks for a probe: the probe out is
        -- dropped, a later one must go first.
        local function close(reopen)
          if reopen > now then
            redis.call('HSET', S, 'probing', 1)
            redis.call('HDEL', S, 'probe', 'probe_until')
            if reopen > num('closed') then redis.call('HSET', S, 'closed', reopen) end
          end
        end
        local function count(id, score)
          redis.call('ZADD', C, score, id)
          if score > num('last') then redis.call('HSET', S, 'last', score) end
          redis.call('PEXPIREAT', C, num('last') + window + 1)
        end
        -- A client's share (KEYS[3]) of `calls` per window: 0 and the calls left if it has
        -- one now, else how long until the call whose leaving frees one is out of the window.
        local function shareWait(calls)
          redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - window)
          local taken = redis.call('ZCARD', KEYS[3])
          if taken < calls then return 0, calls - taken end
          local entry = redis.call('ZRANGE', KEYS[3], taken - calls, taken - calls, 'WITHSCORES')
          return math.max(1, tonumber(entry[2]) + window - now), 0
        end
        if op == 'close' then
          close(now + tonumber(ARGV[9]))
          return reply(0, 0)
        end
        if op == 'complete' then
          count(ARGV[9], now + math.max(0, tonumber(ARGV[10]) or 0))
          return reply(0, 0)
        end
        if op == 'reopen' then
          if redis.call('HGET', S, 'probe') == ARGV[9] then
            redis.call('HDEL', S, 'probing', 'probe', 'probe_until')
          end
          return reply(0, 0)
        end
        if op == 'share' then
          local wait, left = shareWait(math.max(1, tonumber(ARGV[9])))
          if wait > 0 then return reply(3, wait) end
          return reply(1, left)
        end
        if op == 'used' then
          return reply(0, redis.call('ZCOUNT', C, '(' .. (now - window), '+inf'))
        end
        if op == 'observe' then
          local upstreamLimit = tonumber(ARGV[9])
          local remaining = tonumber(ARGV[10])
          if upstreamLimit and upstreamLimit >= 1 then
            redis.call('HSET', S, 'limit', upstreamLimit)
          end
          if remaining and remaining >= 0 then
            redis.call('HSET', S, 'remaining', remaining, 'reset_at', now + (tonumber(ARGV[11]) or window))
          end
          return reply(0, 0)
        end
        check()
        if op == 'window' then
          close(now + tonumber(ARGV[9]))
          for i = 10, #ARGV - 1, 2 do
            local age = tonumber(ARGV[i])
            if age and age < window then
              if not redis.call('ZSCORE', C, ARGV[i + 1]) then count(ARGV[i + 1], now - age) end
            end
          end
          local wait, code = pausedFor()
          return reply(code, wait)
        end
        -- acquire
        local share = tonumber(ARGV[11]) or 0
        local wait, code = pausedFor()
        if wait > 0 then return reply(code, wait) end
        if share > 0 then
          local spent = shareWait(share)
          if spent > 0 then return reply(3, spent) end
        end
        local closed = num('closed')
        if now < closed then return reply(0, closed - now) end
        -- After a 429's pause, one call at a time until one comes back (`reopen`).
        local probing = num('probing') == 1
        if probing and now < num('probe_until') then
          return reply(0, math.min(100, num('probe_until') - now))
        end
        redis.call('ZREMRANGEBYSCORE', C, '-inf', now - window)
        local used = redis.call('ZCARD', C)
        local effective = limit
        local upstreamLimit = tonumber(redis.call('HGET', S, 'limit') or '')
        if upstreamLimit then effective = math.min(limit, upstreamLimit) end
        local needed = 1
        if ARGV[9] == 'refresh' then needed = math.floor(effective / 2) + 1 end
        local available = effective - used
        local remaining = tonumber(redis.call('HGET', S, 'remaining') or '')
        local resetAt = num('reset_at')
        local upstreamBound = false
        if remaining and now < resetAt and remaining < available then
          available = remaining
          upstreamBound = true
        end
        if available >= needed then
          count(ARGV[10], now + timeout)
          redis.call('HINCRBY', S, 'seq', 1)
          if remaining then redis.call('HINCRBY', S, 'remaining', -1) end
          -- Charged to the client's share only now that the call is made.
          if share > 0 then
            redis.call('ZADD', KEYS[3], now, ARGV[10])
            redis.call('ZREMRANGEBYRANK', KEYS[3], 0, -share - 1)
            redis.call('PEXPIRE', KEYS[3], window)
          end
          if probing then
            redis.call('HSET', S, 'probe', ARGV[10], 'probe_until', now + tonumber(ARGV[12]))
            return reply(4, 0)
          end
          return reply(1, 0)
        end
        if upstreamBound then return reply(0, math.max(1000, resetAt - now)) end
        if effective <= 0 then return reply(0, window) end
        -- The call whose leaving frees enough room is this far from the oldest.
        local index = math.max(0, math.min(used - 1, used - effective + needed - 1))
        local entry = redis.call('ZRANGE', C, index, index, 'WITHSCORES')
        local frees = now + window
        if entry[2] then frees = tonumber(entry[2]) + window end
        return reply(0, math.max(1, frees - now))
        """)
}
