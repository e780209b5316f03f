import AmodbRedis
import Dispatch
import Foundation
import Synchronization

/// This replica's link to the Redis that replicas share (`AMODB_REDIS_URL`): every Redis
/// call of the proxy goes through `call`, which times it, counts failures and tells when
/// an outage starts (one warning) and ends (one note). A heartbeat keeps this replica in
/// the fleet's roster (`ReplicaRoster`, one sorted set), counts the live replicas (the
/// metrics, the status page, a fleet larger than `AMODB_FLEET_SIZE`) and runs what others asked to do once a beat (`onEveryBeat`: the budget's check of the
/// fleet's window).
///
/// Redis is an optimisation, never a dependency: a failed call returns `nil`, and the caller
/// does what it can without Redis (the budget: only this replica's outage reserve). The
/// outage is declared (`outageStart`, for the log, `/readyz` and the metrics) after
/// `failuresForOutage` failures in a row spanning `outageSpan` seconds with no success, or
/// when no first reply came within `outageSpan` of the start: one slow command is none.
final class RedisLink: Sendable {
    /// Whether Redis answered the last call.
    private enum Health {
        case unknown, up, down
    }

    private struct State {
        var health = Health.unknown
        /// When this link was made (the clock's seconds).
        var started: Double
        /// Whether any call ever succeeded.
        var everAnswered = false
        /// The failures since the last success: when the first was, and how many.
        var failing: (since: Double, count: Int)?
        /// When the outage in progress was declared; `nil`: none is.
        var outageSince: Double?
        /// Replicas seen alive by the last heartbeat (this one included); 1 until one succeeds.
        var replicas = 1
        /// What the beats of the last lifetime counted, newest last.
        var recentCounts: [Int] = []
        /// Work run after every beat.
        var everyBeat: [@Sendable () async -> Void] = []
        /// The server's `maxmemory-policy` when it may evict the budget's keys (`allkeys-*`).
        var evictingPolicy: String?
        /// When the policy was last asked (the clock's seconds).
        var policyAsked: Double?
        var heartbeat: Task<Void, Never>?
        var listener: Task<Void, Never>?
    }

    /// The client on the request path (short timeouts).
    let client: RedisClient
    /// What every key starts with (`AMODB_REDIS_PREFIX`; under Redis Cluster that prefix
    /// in braces, the cluster mode's tag, so that every key and every script is in one slot).
    let prefix: String
    /// This replica's name in leases, heartbeats and call ids: random, per process.
    let replicaID: String
    /// The channel on which fills are announced.
    var fillsChannel: String { prefix + "fills" }
    private let subscriber: RedisSubscriber
    private let roster: ReplicaRoster
    private let logger: ProxyLogger
    private let announcements = FillAnnouncements()
    private let state: Mutex<State>
    private let clock: any ProxyClock
    private let errors = Atomic<Int>(0)
    /// What the last failure was, for the outage's log line and `/readyz`.
    private let lastProblem = Mutex("")
    /// Whether the last connection attempt failed on the server's TLS certificate.
    private let certificateRejected = Atomic<Bool>(false)
    private let durations = Histogram(bounds: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1])
    /// Seconds between heartbeats; a replica is dead after three missed.
    let heartbeatInterval: Double
    /// Beats a replica may miss before it is no longer counted.
    static let beatsPerLifetime = 3
    /// How long a replica counts after its last beat, in seconds.
    var replicaLifetime: Double { heartbeatInterval * Double(Self.beatsPerLifetime) }

    /// A link to `configuration`'s server under `prefix`; nothing is sent before `start()`.
    /// `largestBody`: the largest body the proxy stores (`AMODB_MAX_UPSTREAM_BYTES`), so that
    /// no reply larger than the envelope of such a body is ever read.
    init(
        configuration: RedisConfiguration, prefix: String, logger: ProxyLogger, largestBody: Int,
        heartbeatInterval: Double = 1, clock: any ProxyClock = SystemClock()
    ) {
        self.clock = clock
        state = Mutex(State(started: clock.now()))
        var configuration = configuration
        configuration.limits = configuration.limits.allowingBulkStrings(
            of: CacheEnvelope.largestSize(bodyBytes: largestBody))
        client = RedisClient(configuration: configuration)
        subscriber = RedisSubscriber(configuration: configuration)
        self.prefix = configuration.cluster?.keyPrefix ?? prefix
        self.logger = logger
        self.heartbeatInterval = heartbeatInterval
        replicaID = UUID().uuidString.lowercased().prefix(12).description
        roster = ReplicaRoster(
            client: client, prefix: self.prefix,
            lifetimeMilliseconds: Int64(heartbeatInterval * Double(Self.beatsPerLifetime) * 1000))
    }

    /// Runs `work` after every heartbeat (whether or not Redis answered it).
    func onEveryBeat(_ work: @escaping @Sendable () async -> Void) {
        state.withLock { $0.everyBeat.append(work) }
    }

    /// Starts the heartbeat and the announcement listener; returns at once (Redis may be unreachable).
    func start() {
        // Beats keep their cadence: the next is due an interval after the last began, not
        // after its work ended, so a slow Redis call or a late reconcile does not stretch
        // the gap between beats towards the lifetime the others count this replica by.
        let heartbeat = Task { [weak self] in
            var due = ContinuousClock.now
            while let self, !Task.isCancelled {
                await self.beat()
                let interval = Duration.milliseconds(Int(self.heartbeatInterval * 1000))
                due = max(due + interval, ContinuousClock.now + interval / 4)
                try? await Task.sleep(until: due, clock: .continuous)
            }
        }
        let channel = fillsChannel
        let listener = Task { [subscriber, announcements, weak self] in
            // Subscribed again after each reconnection by the subscriber itself; until the
            // first success, waiters poll.
            while !Task.isCancelled {
                do {
                    try await subscriber.subscribe(channel)
                    break
                } catch {
                    if case .server(let reply)? = error as? RedisError { self?.refused("SUBSCRIBE", reply) }
                    try? await Task.sleep(for: .milliseconds(500))
                }
            }
            for await message in subscriber.messages {
                announcements.announce(String(decoding: message.payload, as: UTF8.self))
            }
        }
        state.withLock {
            $0.heartbeat = heartbeat
            $0.listener = listener
        }
    }

    /// Stops the heartbeat, removes this replica's key (best effort) and closes the connections.
    func shutdown() async {
        let tasks = state.withLock { state in
            defer {
                state.heartbeat = nil
                state.listener = nil
            }
            return [state.heartbeat, state.listener]
        }
        tasks.forEach { $0?.cancel() }
        _ = await call { _ in try await self.roster.leave(self.replicaID) }
        await subscriber.shutdown()
        await client.shutdown()
        announcements.wakeAll()
    }

    /// Commands the server refused that the fleet needs, each logged once.
    private let refusedCommands = Mutex<Set<String>>([])

    /// Logs once per command that the server refuses one the fleet cannot work without
    /// (a managed service or an ACL that disables scripts or pub/sub), naming it and what
    /// to allow: otherwise it would only show as "redis refused a command" on every call.
    private func refused(_ command: String, _ reply: RedisServerError) {
        let first = refusedCommands.withLock { $0.insert(command).inserted }
        guard first else { return }
        logger.error(
            "redis refuses a command replicas need: allow scripts (EVALSHA, EVAL) and pub/sub (SUBSCRIBE, PUBLISH), e.g. ACL +@scripting +@pubsub, or use a Redis that has them",
            ["missing": command, "reply": reply.message, "redis": "\(client.configuration.endpoint)"])
    }

    /// Logs once that the Redis is a cluster while the proxy was not told so: most of its
    /// keys' slots are on other nodes, so most commands come back `MOVED` (or, behind a
    /// service's proxy, its scripts `CROSSSLOT`).
    private func notClusterMode(_ reply: RedisServerError) {
        let first = refusedCommands.withLock { $0.insert("cluster mode").inserted }
        guard first else { return }
        logger.error(
            "redis is a cluster (cluster mode enabled): set AMODB_REDIS_CLUSTER=on so that every key is in one slot and its master is followed",
            ["reply": String(reply.message.prefix(120)), "redis": "\(client.configuration.endpoint)"])
    }

    /// Failures in a row that, with `outageSpan`, make an outage.
    static let failuresForOutage = 3
    /// Seconds of failures (or of no first reply) that make an outage.
    static let outageSpan: Double = 1

    /// When the outage in progress was declared (the clock's seconds), or `nil` while Redis
    /// answers or has not failed long enough to be declared lost.
    func outageStart() -> Double? {
        declareOutageIfDue()
        return state.withLock { $0.outageSince }
    }

    /// Declares the outage (and logs it once) if the failures so far make one.
    private func declareOutageIfDue() {
        let now = clock.now()
        let declared = state.withLock { state -> Bool in
            guard state.outageSince == nil else { return false }
            let neverAnswered = !state.everAnswered && now - state.started >= Self.outageSpan
            let failedLong =
                state.failing.map { $0.count >= Self.failuresForOutage && now - $0.since >= Self.outageSpan } ?? false
            guard neverAnswered || failedLong else { return false }
            state.outageSince = now
            return true
        }
        guard declared else { return }
        // RedisError never carries the password; the endpoint's description redacts it.
        logger.warning(
            "redis unreachable: serving from memory; calls to amodb only from this replica's outage reserve",
            [
                "redis": "\(client.configuration.endpoint)", "problem": lastProblem.withLock { $0 },
                "replicas": String(replicas),
            ])
    }

    /// Runs one Redis interaction; `nil` when Redis failed (counted, and an outage logged once).
    func call<Value>(_ body: (RedisClient) async throws -> Value) async -> Value? {
        let started = ContinuousClock.now
        do {
            let value = try await body(client)
            record(started)
            changeHealth(to: .up, because: nil)
            let ended = state.withLock { state in
                defer {
                    state.everAnswered = true
                    state.failing = nil
                    state.outageSince = nil
                }
                return state.outageSince != nil
            }
            if ended {
                logger.info("redis reachable again: sharing resumed", ["redis": "\(client.configuration.endpoint)"])
            }
            return value
        } catch {
            record(started)
            errors.add(1, ordering: .relaxed)
            // A reply of the server's own (a script error) is not an outage. Only RedisError
            // reaches here (the bodies call the client); its text never carries the password.
            let redisError = error as? RedisError ?? .unexpectedReply("\(type(of: error))")
            if case .server(let reply) = redisError {
                // An ACL's `NOPERM … run the 'evalsha' command`, or a service that renamed it away.
                if ["MOVED", "ASK", "CLUSTERDOWN", "CROSSSLOT"].contains(reply.code),
                    client.configuration.cluster == nil
                {
                    notClusterMode(reply)
                } else if reply.code == "NOPERM" || reply.message.hasPrefix("ERR unknown command") {
                    let quoted = reply.message.split(separator: "'", omittingEmptySubsequences: false)
                    refused(quoted.count >= 3 ? quoted[1].uppercased() : reply.message, reply)
                }
                logger.error("redis refused a command", ["problem": redisError.description])
            } else {
                changeHealth(to: .down, because: redisError)
                let now = clock.now()
                lastProblem.withLock { $0 = redisError.description }
                state.withLock { state in
                    state.failing = (state.failing?.since ?? now, (state.failing?.count ?? 0) + 1)
                }
                declareOutageIfDue()
            }
            return nil
        }
    }

    /// Whether Redis answered the last call (false before the first).
    var isUp: Bool { state.withLock { $0.health == .up } }

    /// Replicas the last heartbeat saw alive, this one included (at least 1).
    var replicas: Int { state.withLock { $0.replicas } }

    /// The most replicas a beat counted within the last lifetime (at least 1): right after
    /// Redis lost its data, the others are back in the roster only once they have beaten again.
    var replicasRecently: Int { state.withLock { max($0.replicas, $0.recentCounts.max() ?? 1) } }

    /// Waits until `key`'s fill is announced or `timeout` passes, whichever is first.
    func waitForFill(of key: String, upTo timeout: Duration) async {
        await announcements.wait(for: key, upTo: timeout)
    }

    /// One heartbeat: this replica marked alive and the live replicas counted, then the
    /// work others asked for.
    private func beat() async {
        if let counted = await call({ _ in try await self.roster.beat(self.replicaID) }) {
            state.withLock { state in
                state.replicas = max(1, counted)
                state.recentCounts.append(state.replicas)
                if state.recentCounts.count > Self.beatsPerLifetime { state.recentCounts.removeFirst() }
            }
            await askEvictionPolicy()
        }
        for work in state.withLock({ $0.everyBeat }) { await work() }
    }

    /// How often the server's eviction policy is asked again, in seconds.
    static let policyInterval: Double = 60

    /// Asks the server's `maxmemory-policy` (once a minute): an `allkeys-*` policy may evict
    /// the budget's keys, which the budget detects and pays for with a window of reserve
    /// only, so the operator is told (once per policy, and in `/readyz`). A server that
    /// refuses `CONFIG` (many managed services) is not asked again and nothing is said.
    private func askEvictionPolicy() async {
        let now = clock.now()
        let due = state.withLock { state -> Bool in
            guard state.policyAsked.map({ now - $0 >= Self.policyInterval }) ?? true else { return false }
            state.policyAsked = now
            return true
        }
        guard due else { return }
        guard let reply = try? await client.send(["CONFIG", "GET", "maxmemory-policy"]) else {
            state.withLock { $0.policyAsked = .infinity }
            return
        }
        guard case .array(let fields) = reply, fields.count == 2, let policy = fields[1].string else { return }
        let evicting = policy.hasPrefix("allkeys-") ? policy : nil
        let changed = state.withLock { state -> Bool in
            defer { state.evictingPolicy = evicting }
            return state.evictingPolicy != evicting
        }
        guard changed, let evicting else { return }
        logger.warning(
            "redis may evict the budget's keys (maxmemory-policy \(evicting)): each eviction pauses calls to amodb for a minute (the outage reserve only); set maxmemory-policy to volatile-lru or volatile-lfu",
            ["redis": "\(client.configuration.endpoint)", "maxmemory_policy": evicting])
    }

    private func record(_ started: ContinuousClock.Instant) {
        let spent = ContinuousClock.now - started
        durations.observe(seconds: Double(spent.components.seconds) + Double(spent.components.attoseconds) / 1e18)
    }

    private func changeHealth(to health: Health, because error: RedisError?) {
        state.withLock { $0.health = health }
        if case .certificateRejected = error {
            certificateRejected.store(true, ordering: .relaxed)
        } else if health == .up {
            certificateRejected.store(false, ordering: .relaxed)
        }
    }

    /// What `/readyz` adds while an outage is declared: `,"redis":"unreachable: <why>"`
    /// (the reason never carries the password); nothing while Redis answers.
    var readinessDetail: String {
        let policy = state.withLock { $0.evictingPolicy }
        let eviction =
            policy.map {
                #","redis_eviction":"# + JSONText.quoted("maxmemory-policy \($0) may evict the budget's keys")
            } ?? ""
        guard outageStart() != nil else { return eviction }
        return #","redis":"# + JSONText.quoted("unreachable: " + lastProblem.withLock { $0 }) + eviction
    }

    /// Adds the Redis families to `/metrics`.
    func render(into out: inout PrometheusText) {
        out.gauge(
            "amodb_proxy_redis_up", "1 when the Redis replicas share answered the last call, else 0.",
            [([], isUp ? 1 : 0)])
        out.gauge(
            "amodb_proxy_redis_outage",
            "1 while Redis is declared lost (failures spanning a second): the replica calls amodb only from its outage reserve.",
            [([], outageStart() == nil ? 0 : 1)])
        out.gauge(
            "amodb_proxy_redis_certificate_rejected",
            "1 while Redis's TLS certificate does not verify (rediss://): nothing is sent to it; see the log for why.",
            [([], certificateRejected.load(ordering: .relaxed) ? 1 : 0)])
        out.counter(
            "amodb_proxy_redis_errors_total", "Redis calls that failed (timeout, connection, error reply).",
            [([], Double(errors.load(ordering: .relaxed)))])
        out.histogram(
            "amodb_proxy_redis_call_duration_seconds", "Duration of Redis calls, failures included.", [([], durations)])
        out.gauge(
            "amodb_proxy_replicas", "Replicas seen alive by the last heartbeat, this one included.",
            [([], Double(replicas))])
    }
}
