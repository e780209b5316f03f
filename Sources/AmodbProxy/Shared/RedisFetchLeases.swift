import AmodbRedis

/// The leases of a fleet of replicas: this process's waiters stay in memory (a
/// `MemoryFetchLeases`), and the leader's task coordinates with the other replicas through
/// Redis before it calls amodb (`lead`), then shares what it stored (`share`).
///
/// `lead`: a fresh copy another replica stored (`GET <prefix>cache:<key>`, validated like a
/// snapshot entry) is used at once; otherwise the fleet's lease is taken
/// (`SET <prefix>lease:<key> <replica> NX PX <upstream timeout + margin>`); while another
/// replica holds it, this one waits for its announcement (`PUBLISH <prefix>fills <key>`),
/// polling with back-off in case the announcement is lost, up to the lease's lifetime;
/// then it fetches itself. Any Redis failure: this replica fetches, as a lone one would.
///
/// `share`: the entry goes to Redis (`SET … PX <what is left of max-stale>`), is announced,
/// and the lease is released (deleted only while it is still this replica's).
final class RedisFetchLeases: FetchLeases {
    /// What an entry read from Redis must respect (the snapshot's bounds).
    struct Rules: Sendable {
        /// Ages and lifetimes an entry may have (the settings' own).
        var bounds: CacheSnapshot.Bounds
        /// The checks a fresh answer passes (JSON, the right movie, no key).
        var validator: AnswerValidator
        /// How long the lease lives: the upstream timeout plus a margin, in seconds.
        var leaseSeconds: Double
    }

    private let local: MemoryFetchLeases
    let link: RedisLink
    private let rules: Rules
    private let clock: any ProxyClock
    private let logger: ProxyLogger

    /// Deletes the lease only if this replica still holds it (another may have taken it after it lapsed).
    static let releaseScript = RedisScript("""
        if redis.call('GET', KEYS[1]) == ARGV[1] then
          return redis.call('DEL', KEYS[1])
        end
        return 0
        """)

    /// Leases over `link`, with this process's waiters in `local`.
    init(local: MemoryFetchLeases, link: RedisLink, rules: Rules, clock: any ProxyClock, logger: ProxyLogger) {
        self.local = local
        self.link = link
        self.rules = rules
        self.clock = clock
        self.logger = logger
    }

    func claim(
        _ key: String, cached: () -> CachedResponse?, mayLead: () -> CacheOutcome.MissDetail?, waiter: FetchWaiter?
    ) -> LeaseClaim {
        local.claim(key, cached: cached, mayLead: mayLead, waiter: waiter)
    }

    func release<Result>(_ key: String, commit: () -> Result) -> (Result, [FetchWaiter]) {
        local.release(key, commit: commit)
    }

    var count: Int { local.count }

    func lead(_ key: String) async -> CachedResponse? {
        let cacheKey = link.prefix + "cache:" + key
        let leaseKey = link.prefix + "lease:" + key
        let leaseMilliseconds = Int64(rules.leaseSeconds * 1000)
        let deadline = ContinuousClock.now + .milliseconds(leaseMilliseconds)
        var pause = Duration.milliseconds(10)
        while true {
            guard let value = await link.call({ try await $0.get(cacheKey) }) else { return nil }
            if let value, let entry = usable(value, key: key) { return entry }
            let replica = Array(link.replicaID.utf8)
            guard let taken = await link.call({ try await $0.set(leaseKey, replica, condition: .ifNotExists, expiry: .milliseconds(leaseMilliseconds)) })
            else { return nil }
            if taken || ContinuousClock.now >= deadline { return nil }
            await link.waitForFill(of: key, upTo: pause)
            pause = min(pause * 2, .milliseconds(250))
        }
    }

    func share(_ key: String, _ entry: CachedResponse?) async {
        if let entry {
            let now = clock.now()
            // A 200 may be served stale until max-stale; a 404 only while fresh.
            let keep = (entry.status == 200 ? rules.bounds.maxStale : entry.lifetime) - (now - entry.storedAt)
            if keep >= 0.001 {
                let cacheKey = link.prefix + "cache:" + key
                let stored = await link.call {
                    try await $0.set(cacheKey, CacheEnvelope.encode(entry), expiry: .milliseconds(Int64(keep * 1000)))
                }
                if stored != nil {
                    _ = await link.call { try await $0.publish(self.link.fillsChannel, Array(key.utf8)) }
                }
            }
        }
        let leaseKey = link.prefix + "lease:" + key
        _ = await link.call { try await $0.run(Self.releaseScript, keys: [leaseKey], arguments: [.bulk(link.replicaID)]) }
    }

    /// The entry in `value` if it may answer now: readable, fresh, and passing the
    /// snapshot's checks for `key`. Anything else is logged and ignored (a fetch follows).
    private func usable(_ value: [UInt8], key: String) -> CachedResponse? {
        let now = clock.now()
        let problem: String
        switch CacheEnvelope.decode(value) {
        case .failure(let error):
            problem = error.reason
        case .success(let entry):
            guard let found = CacheSnapshot.problem(key: key, with: entry, now: now, bounds: rules.bounds, validator: rules.validator) else {
                return entry.isFresh(at: now) ? entry : nil
            }
            problem = found
        }
        logger.warning("entry in redis refused", ["key": String(key.prefix(256)), "problem": problem])
        return nil
    }
}
