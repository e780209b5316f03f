import AmodbModels
import AmodbRedis

/// The leases of a fleet of replicas: this process's waiters stay in memory (a
/// `MemoryFetchLeases`), and the leader's task coordinates with the other replicas through
/// Redis before it calls amodb (`lead`), then shares how its fetch ended (`share`).
///
/// `lead`, one script per look (`claimScript`): a fresh copy another replica stored
/// (`<prefix>cache:<key>`, validated like a snapshot entry) is used at once; so is the
/// failure of a fetch that ended after this request arrived (`<prefix>outcome:<key>`): the
/// herd it belonged to costs one call, whether amodb answered or failed. Otherwise the
/// fleet's lease is taken (`<prefix>lease:<key>`, this replica's id, for the upstream timeout
/// plus a margin) and this replica calls. While another replica holds it, this one waits for
/// its announcement (`PUBLISH <prefix>fills <key>`), looking again with back-off in case the
/// announcement is lost, up to the lease's lifetime; then it answers that amodb did not
/// answer in time, rather than making a second call or keeping its clients waiting. A lease
/// that lapsed (its holder died) is taken over. Any Redis failure: this replica fetches, as
/// a lone one would.
///
/// `share`, one script (`finishScript`): the entry (or the failure) is stored, the lease
/// released if it is still this replica's, and the key announced, in one step, so a replica
/// looking in between finds either the lease or what it ended with.
final class RedisFetchLeases: FetchLeases {
    /// What an entry read from Redis must respect (the snapshot's bounds).
    struct Rules: Sendable {
        /// Ages and lifetimes an entry may have (the settings' own).
        var bounds: CacheSnapshot.Bounds
        /// The checks a fresh answer passes (JSON, the right movie, no key).
        var validator: AnswerValidator
        /// How long the lease lives, and the longest a replica waits on another's fetch:
        /// the upstream timeout plus a margin, in seconds.
        var leaseSeconds: Double
    }

    /// What one look at the fleet's state found.
    private enum Look {
        case entry([UInt8])
        case outcome([UInt8])
        case taken
        case held
    }

    private let local: MemoryFetchLeases
    let link: RedisLink
    private let rules: Rules
    private let clock: any ProxyClock
    private let logger: ProxyLogger

    /// KEYS: cache, lease, outcome. ARGV: this replica, the lease's lifetime (ms), when the
    /// request arrived (ms), '1' to pass over a stored entry this replica found unusable.
    /// Replies `{'entry', value}`, `{'outcome', value}` (a failure written after the request
    /// arrived), `{'taken'}` (this replica now holds the lease) or `{'held'}`.
    static let claimScript = RedisScript(
        """
        if ARGV[4] ~= '1' then
          local value = redis.call('GET', KEYS[1])
          if value then return {'entry', value} end
        end
        local outcome = redis.call('GET', KEYS[3])
        if outcome then
          local finished = tonumber(string.match(outcome, '^v1 (%d+) '))
          if finished and finished >= tonumber(ARGV[3]) then return {'outcome', outcome} end
        end
        if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return {'taken'} end
        return {'held'}
        """)

    /// KEYS: cache, lease, outcome. ARGV: this replica, the fills channel, the cache key,
    /// what is stored ('entry', 'failure' or 'none'), its value, its lifetime (ms).
    /// An entry replaces an earlier failure. The lease is deleted only if it is still this
    /// replica's (another may have taken it after it lapsed). Replies 1 if it was released.
    static let finishScript = RedisScript(
        """
        if ARGV[4] == 'entry' then
          redis.call('SET', KEYS[1], ARGV[5], 'PX', ARGV[6])
          redis.call('DEL', KEYS[3])
        elseif ARGV[4] == 'failure' then
          redis.call('SET', KEYS[3], ARGV[5], 'PX', ARGV[6])
        end
        local released = 0
        if redis.call('GET', KEYS[2]) == ARGV[1] then
          released = redis.call('DEL', KEYS[2])
        end
        if ARGV[4] ~= 'none' or released == 1 then
          redis.call('PUBLISH', ARGV[2], ARGV[3])
        end
        return released
        """)

    /// Leases over `link`, with this process's waiters in `local`.
    init(local: MemoryFetchLeases, link: RedisLink, rules: Rules, clock: any ProxyClock, logger: ProxyLogger) {
        self.local = local
        self.link = link
        self.rules = rules
        self.clock = clock
        self.logger = logger
    }

    func claim(_ key: String, cached: () -> CachedResponse?, waiter: FetchWaiter?) -> LeaseClaim {
        local.claim(key, cached: cached, waiter: waiter)
    }

    func release<Result>(_ key: String, commit: () -> Result) -> (Result, [FetchWaiter]) {
        local.release(key, commit: commit)
    }

    var count: Int { local.count }

    func lead(_ key: String, arrivedAt: Double) async -> FetchResult? {
        let keys = self.keys(key)
        let leaseMilliseconds = Int64(rules.leaseSeconds * 1000)
        let arrival = Self.milliseconds(arrivedAt)
        let deadline = ContinuousClock.now + .milliseconds(leaseMilliseconds)
        var pause = Duration.milliseconds(10)
        var passOverEntry = false
        // Bounded twice: by the lease's lifetime, and by a number of looks that announcements
        // published over and over (by a broken or hostile client of the channel) cannot pass.
        for _ in 0..<Self.mostLooks {
            let arguments: [RedisValue] = [
                .bulk(link.replicaID), .integer(leaseMilliseconds), .integer(arrival), passOverEntry ? "1" : "0",
            ]
            guard let reply = await link.call({ try await $0.run(Self.claimScript, keys: keys, arguments: arguments) })
            else { return nil }
            switch Self.look(reply) {
            case .entry(let value):
                if let entry = usable(value, key: key) { return .shared(entry) }
                passOverEntry = true
                continue
            case .outcome(let value):
                guard let failure = FailureEnvelope.decode(value, key: key) else {
                    logger.warning("failure in redis refused", ["key": String(key.prefix(256))])
                    return nil
                }
                return .failed(failure)
            case .taken:
                return nil
            case .held:
                break
            case nil:
                logger.error("unexpected reply from the lease script", ["reply": reply.description])
                return nil
            }
            let left = deadline - ContinuousClock.now
            // The holder's fetch outlived the upstream timeout and its margin: it is stuck
            // or gone without a word (killed). A second call would keep these clients past the
            // timeout too; they are told now to come back, by when the lease is free again.
            guard left > .zero else { return .failed(Self.holderSilent) }
            await link.waitForFill(of: key, upTo: min(pause, left))
            pause = min(pause * 2, .milliseconds(250))
            passOverEntry = false
        }
        return .failed(Self.holderSilent)
    }

    /// What clients are told when the replica holding a path's lease never said how its
    /// fetch went: no answer came from amodb through it, so this is no 504 but a `503` with
    /// a `Retry-After`, by when the lease has lapsed and one replica fetches again.
    static let holderSilent = FetchFailure(
        status: 503, message: "Another replica's fetch of this path did not finish; try again in 1 s.",
        fwdStatus: nil, retryAfter: 1)

    /// The most looks one leader takes at the fleet's state (each a Redis call).
    private static let mostLooks = 512

    func share(_ key: String, _ result: FetchResult?) async {
        let now = clock.now()
        var stored: (kind: RedisValue, value: [UInt8], milliseconds: Int64) = ("none", [], 1)
        switch result {
        case .answer(let entry, true)?:
            // A 200 may be served stale until its route's max-stale; a 404 only while fresh.
            let oldest = CacheKey.request(of: key).map { rules.bounds.freshness.oldestStale(of: $0.route) } ?? 0
            let keep = (entry.status == 200 ? oldest : entry.lifetime) - (now - entry.storedAt)
            if keep >= 0.001 { stored = ("entry", CacheEnvelope.encode(entry, key: key), Int64(keep * 1000)) }
        case .failed(let failure)?:
            // Kept as long as a replica may wait on this fetch: every one that arrived before it ended finds it.
            stored = (
                "failure", FailureEnvelope.encode(failure, key: key, finishedAt: Self.milliseconds(now)),
                Int64(rules.leaseSeconds * 1000)
            )
        case .answer?, .shared?, nil:
            break
        }
        let arguments: [RedisValue] = [
            .bulk(link.replicaID), .bulk(link.fillsChannel), .bulk(key), stored.kind, .bulkString(stored.value),
            .integer(stored.milliseconds),
        ]
        _ = await link.call { try await $0.run(Self.finishScript, keys: self.keys(key), arguments: arguments) }
    }

    /// The cache, lease and outcome keys of `key`.
    private func keys(_ key: String) -> [String] {
        [link.prefix + "cache:" + key, link.prefix + "lease:" + key, link.prefix + "outcome:" + key]
    }

    /// What the claim script's `reply` says, or `nil` for a reply of another shape.
    private static func look(_ reply: RedisValue) -> Look? {
        guard let parts = reply.array, let word = parts.first?.string else { return nil }
        switch (word, parts.count) {
        case ("entry", 2): return parts[1].bytes.map(Look.entry)
        case ("outcome", 2): return parts[1].bytes.map(Look.outcome)
        case ("taken", 1): return .taken
        case ("held", 1): return .held
        default: return nil
        }
    }

    private static func milliseconds(_ seconds: Double) -> Int64 {
        (seconds * 1000).checkedInt(.towardZero, clampedTo: 0...Int(Int64.max / 2)).map(Int64.init) ?? 0
    }

    /// The entry in `value` if it may answer now: readable, fresh, and passing the
    /// snapshot's checks for `key`. Anything else is logged and ignored (a fetch follows).
    private func usable(_ value: [UInt8], key: String) -> CachedResponse? {
        let now = clock.now()
        let problem: String
        let decoded = CacheEnvelope.decode(value, key: key) { coding, error in
            // The rest of the entry may still answer; the variant never does. Logged as an
            // envelope refused whole is: someone wrote bytes no replica writes.
            logger.warning(
                "variant in redis refused",
                ["key": String(key.prefix(256)), "coding": "\(coding)", "problem": error.description])
        }
        switch decoded {
        case .failure(let error):
            problem = error.reason
        case .success(let entry):
            guard
                let found = CacheSnapshot.problem(
                    key: key, with: entry, now: now, bounds: rules.bounds, validator: rules.validator)
            else {
                return entry.isFresh(at: now) ? entry : nil
            }
            problem = found
        }
        logger.warning("entry in redis refused", ["key": String(key.prefix(256)), "problem": problem])
        return nil
    }
}
