import AmodbModels
import AmodbRedis
import AmodbRedisTestSupport
import AmodbSandbox
import AmodbTestSupport
import Foundation
import Testing

/// The key's limit holds whatever Redis, amodb and the clients do: in any sliding 60 s
/// window, the calls that all replicas send to amodb are at most `AMODB_RATE_LIMIT`.
///
/// Replicas are child processes of the built `amodb-proxy`, so a replica killed is a real
/// SIGKILL that loses its memory; amodb is the stand-in, which records the instant of every
/// call it receives, refused or not, and is counted in every sliding window, not in fixed
/// minutes. Faults come from a seeded schedule (`CHAOS_SEED`, else a random seed, printed):
/// Redis paused for 50 ms to 3 s (also while a replica starts), flushed, restarted empty,
/// restarted from an older snapshot, a budget key deleted or evicted; one replica's own link
/// to Redis stalled or refused while the others' work; replicas killed and started again
/// (one right after a burst, with Redis flushed in the same second; a lone replica twice
/// within a minute, each with its ledger); amodb answering 429 to everything for a while. Each
/// client request must be answered 200 (404 for an id amodb does not have), or 429 or 503
/// with `Retry-After`, within its deadline; a request whose replica was killed under it is
/// retried once on another, as a load balancer would (and excused if that one is killed
/// under it too).
///
/// The call instants are amodb's, not the proxy's: a call the proxy counted at one instant
/// reaches amodb a little later, by a delay that varies on a loaded host. A budget must
/// keep a margin for that, as it would for the network in front of the real amodb.
@Suite(.timeLimit(.minutes(5)))
struct BudgetChaosTests {
    /// The key's limit in these runs: amodb's smallest plan.
    static let limit = 20
    /// How long a client request may take, in seconds: longer counts as hung. A proxy that
    /// keeps to the limit meets no `Retry-After` longer than the 2 s of amodb's refusal
    /// phases, so its worst case (two such waits, the miss wait, a frozen Redis) is well
    /// inside it, with room for a loaded machine.
    static let deadline = 15.0

    /// Three replicas sharing a Redis that is paused, flushed and restarted, some of them
    /// killed and started again (once while Redis is frozen), amodb refusing every call at
    /// times: about 150 s, several 60 s windows.
    @Test(.enabled(if: RedisServer.isInstalled, Comment(rawValue: RedisServer.notInstalledMessage)))
    func threeReplicasSpendAtMostTheKeysLimitWhateverRedisAmodbAndClientsDo() async throws {
        let seed = Self.seed
        print("BudgetChaosTests: three replicas, seed \(seed) (\(Self.seedSource))")
        let amodb = try Self.startAmodb()
        try await withServer(amodb) { amodb in
            try await withRedisServer { redis in
                let binary = try ProxyBinary()
                // Each replica reaches Redis through a link of its own, which the schedule cuts,
                // and keeps its ledger in a directory of its own, as an operator's volumes would.
                let links = try (0..<3).map { _ in try TCPRelay(to: redis.port) }
                let states = StateDirectories(3)
                defer { states.remove() }
                let replicas = (0..<3).map { index in
                    var environment = Self.environment(amodb: amodb, fleetSize: 3)
                    environment["AMODB_REDIS_URL"] = "redis://127.0.0.1:\(links[index].port)/0"
                    environment["AMODB_STATE_DIR"] = states[index]
                    return ProxyReplica(name: "replica \(index)", binary: binary, environment: environment)
                }
                try await Self.withRunning(replicas) {
                    // Each sees the other two and Redis: the run starts from a healthy fleet.
                    let healthy = await eventually(within: 30) { await Self.allSeeEachOther(replicas) }
                    try #require(healthy, "the replicas did not see each other and Redis within 30 s")
                    try await Self.run(
                        "three replicas", seed: seed, length: .seconds(150), replicas: replicas, redis: redis,
                        amodb: amodb, workers: 8, links: links)
                }
                for link in links { await link.shutdown() }
            }
        }
    }

    /// Three replicas sharing a Redis Cluster (three masters with a replica each) whose
    /// proxy's slot loses its master again and again: killed (its replica promoted, then it
    /// rejoins), a manual failover, frozen past the node timeout (promoted while frozen, then
    /// thawed as a stale master), moved to another master by `redis-cli --cluster reshard`
    /// and back by hand; replicas killed and amodb refusing at times, as the seed draws them:
    /// about 150 s.
    @Test(.enabled(if: RedisCluster.isInstalled, Comment(rawValue: RedisCluster.notInstalledMessage)))
    func threeReplicasOnARedisClusterSpendAtMostTheKeysLimitThroughFailoversAndReshards() async throws {
        let seed = Self.seed
        print("BudgetChaosTests: three replicas on a cluster, seed \(seed) (\(Self.seedSource))")
        let amodb = try Self.startAmodb()
        try await withServer(amodb) { amodb in
            try await withRedisCluster { cluster in
                let binary = try ProxyBinary()
                let states = StateDirectories(3)
                defer { states.remove() }
                let replicas = (0..<3).map { index in
                    var environment = Self.environment(amodb: amodb, fleetSize: 3)
                    // Each starts from another node, as a configuration endpoint's name would.
                    environment["AMODB_REDIS_URL"] = "redis://127.0.0.1:\(cluster.nodes[index * 2 + 1].port)/0"
                    environment["AMODB_REDIS_CLUSTER"] = "on"
                    environment["AMODB_STATE_DIR"] = states[index]
                    return ProxyReplica(name: "replica \(index)", binary: binary, environment: environment)
                }
                try await Self.withRunning(replicas) {
                    let healthy = await eventually(within: 30) { await Self.allSeeEachOther(replicas) }
                    try #require(healthy, "the replicas did not see each other and the cluster within 30 s")
                    // The seed's replica kills and amodb's refusals; the cluster's faults are played beside them.
                    let schedule = ChaosSchedule(seed: seed, length: .seconds(150), replicas: 3, redis: true).keeping {
                        if case .replicaKill = $0 { true } else { $0.isAmodbs }
                    }
                    try await Self.run(
                        "three replicas on a cluster", seed: seed, length: .seconds(150), replicas: replicas,
                        redis: nil,
                        amodb: amodb, workers: 8, schedule: schedule,
                        alongside: { timeline in await Self.clusterFaults(cluster, timeline) })
                }
            }
        }
    }

    /// The faults of the proxy's slot, one after another, each noted as it really starts and ends.
    private static func clusterFaults(_ cluster: RedisCluster, _ timeline: ChaosTimeline) async {
        let slot = RedisSlot.of("{amodb-proxy:}")
        func at(_ seconds: Int) async {
            try? await Task.sleep(until: timeline.start + .seconds(seconds), clock: .continuous)
        }
        func note<Value>(_ what: String, _ change: () async throws -> Value) async -> Value? {
            timeline.note(what)
            do {
                let value = try await change()
                timeline.note("\(what): done")
                return value
            } catch {
                timeline.note("\(what): failed: \(error)")
                return nil
            }
        }
        await at(10)
        let killed = await note("the slot's master killed (SIGKILL), its replica promoted") {
            try await cluster.killMaster(ofSlot: slot).killed
        }
        await at(25)
        if let killed {
            _ = await note("the killed master started again, a replica") { try await cluster.restart(killed) }
        }
        await at(40)
        _ = await note("a manual failover of the slot") { try await cluster.failover(ofSlot: slot) }
        await at(55)
        // Frozen past the node timeout: its replica is promoted while it sleeps, and it wakes a stale master.
        if let frozen = try? await cluster.master(ofSlot: slot) {
            frozen.pause()
            timeline.note("the slot's master \(frozen.port) frozen (SIGSTOP) for 4 s")
            try? await Task.sleep(for: .seconds(4))
            frozen.resume()
            timeline.note("the frozen master thawed (SIGCONT)")
            _ = await note("the cluster agrees again") { try await cluster.waitUntilStable() }
        }
        await at(75)
        if let owner = try? await cluster.master(ofSlot: slot),
            let target = try? await cluster.masters().first(where: { $0.port != owner.port }),
            let first = try? await cluster.slots(of: owner).min()
        {
            _ = await note("redis-cli --cluster reshard of the slot (and those below it) to another master") {
                try await cluster.reshardWithRedisCLI(from: owner, to: target, slots: slot - first + 1)
            }
        }
        await at(105)
        let killedAgain = await note("the slot's master killed again") {
            try await cluster.killMaster(ofSlot: slot).killed
        }
        await at(118)
        if let killedAgain {
            _ = await note("the killed master started again") { try await cluster.restart(killedAgain) }
        }
        if let owner = try? await cluster.master(ofSlot: slot),
            let target = try? await cluster.masters().first(where: { $0.port != owner.port })
        {
            _ = await note("the slot migrated by hand, key by key") {
                try await cluster.migrate(slot: slot, to: target, keysPerStep: 3, pauseBetweenSteps: .milliseconds(10))
            }
        }
    }

    /// One replica alone, without Redis, with amodb refusing every call at times: about 90 s.
    @Test func oneReplicaAloneSpendsAtMostTheKeysLimitThroughAmodbsRefusals() async throws {
        let seed = Self.seed
        print("BudgetChaosTests: one replica, seed \(seed) (\(Self.seedSource))")
        let amodb = try Self.startAmodb()
        try await withServer(amodb) { amodb in
            let states = StateDirectories(1)
            defer { states.remove() }
            var environment = Self.environment(amodb: amodb, fleetSize: 1)
            environment["AMODB_STATE_DIR"] = states[0]
            let replica = ProxyReplica(name: "replica 0", binary: try ProxyBinary(), environment: environment)
            try await Self.withRunning([replica]) {
                try await Self.run(
                    "one replica", seed: seed, length: .seconds(90), replicas: [replica], redis: nil, amodb: amodb,
                    workers: 4)
            }
        }
    }

    /// The judge itself: windows slide (not fixed minutes), and a call exactly 60 s before
    /// another is outside its window, as amodb counts.
    @Test func theBusiestWindowSlidesAndLeavesOutACallExactlySixtySecondsOld() throws {
        let start = ContinuousClock.now
        // Fixed minutes hold 3 each; (10, 70] holds 4; (40, 100] holds 4, not 5, as 40 is
        // exactly 60 s before 100.
        let instants = [0, 40, 50, 60, 70, 100].map { start + .seconds($0) }
        let busiest = try #require(BusiestWindow(of: instants, length: .seconds(60)))
        #expect(busiest.count == 4)
        #expect(busiest.indices == 1...4)
        #expect(BusiestWindow(of: [], length: .seconds(60)) == nil)
    }

    /// A replay plays the same faults, and a fleet's run has every kind of fault.
    @Test func aSeedGivesTheSameFaultsAndAFleetsRunHasEveryKind() {
        let first = ChaosSchedule(seed: 7, length: .seconds(150), replicas: 3, redis: true)
        #expect(first.entries == ChaosSchedule(seed: 7, length: .seconds(150), replicas: 3, redis: true).entries)
        #expect(first.entries != ChaosSchedule(seed: 8, length: .seconds(150), replicas: 3, redis: true).entries)
        #expect(first.entries.contains { if case .redisPause = $0.fault { true } else { false } })
        #expect(first.entries.contains { $0.fault == .redisFlush })
        #expect(first.entries.contains { $0.fault == .redisRestart })
        #expect(first.entries.contains { if case .replicaKill = $0.fault { true } else { false } })
        #expect(first.entries.contains { if case .replicaStartDuringRedisPause = $0.fault { true } else { false } })
        #expect(first.entries.contains { if case .linkStall = $0.fault { true } else { false } })
        #expect(first.entries.contains { if case .linkRefuse = $0.fault { true } else { false } })
        #expect(first.entries.contains { if case .budgetKeyDeleted = $0.fault { true } else { false } })
        #expect(first.entries.contains { if case .redisOlderSnapshot = $0.fault { true } else { false } })
        #expect(first.entries.contains { $0.fault == .redisEviction })
        #expect(first.entries.contains { if case .burstKillFlush = $0.fault { true } else { false } })
        #expect(first.entries.contains { $0.fault.isAmodbs })
        #expect(first.entries.allSatisfy { $0.offset >= .seconds(3) && $0.offset <= .seconds(142) })
        let alone = ChaosSchedule(seed: 7, length: .seconds(90), replicas: 1, redis: false)
        #expect(alone.entries.contains { $0.fault.isAmodbs })
        #expect(alone.entries.contains { if case .replicaRestartedTwice = $0.fault { true } else { false } })
        #expect(
            alone.entries.allSatisfy {
                if case .replicaRestartedTwice = $0.fault { true } else { $0.fault.isAmodbs }
            })
    }

    /// Plays the seed's faults and its clients' requests for `length`, then judges what amodb
    /// received and what the clients got; prints the summary, and on failure the timeline.
    /// `schedule`: the seed's own unless given; `alongside`: more faults, played beside it.
    private static func run(
        _ name: String, seed: UInt64, length: Duration, replicas: [ProxyReplica], redis: RedisServer?,
        amodb: AmodbSandbox, workers: Int, links: [TCPRelay] = [], schedule given: ChaosSchedule? = nil,
        alongside: @Sendable (ChaosTimeline) async -> Void = { _ in }
    ) async throws {
        let schedule =
            given ?? ChaosSchedule(seed: seed, length: length, replicas: replicas.count, redis: redis != nil)
        let traffic = ChaosTraffic(
            warm: warmPaths(amodb), cold: coldPaths(amodb, seed: seed), workers: workers, deadline: deadline)
        let timeline = ChaosTimeline()
        timeline.note(
            "clients start: \(workers) at a time, \(traffic.clients) addresses; \(schedule.entries.count) faults")
        let player = ChaosFaultPlayer(redis: redis, replicas: replicas, amodb: amodb, timeline: timeline, links: links)
        async let sent = traffic.run(seed: seed, for: length, replicas: replicas)
        async let more: Void = alongside(timeline)
        await player.play(schedule)
        await more
        let requests = try await sent
        timeline.note("clients done")
        // Nothing calls amodb any more: what it received is complete.
        for replica in replicas { await replica.kill() }

        let report = ChaosReport(
            name: "BudgetChaosTests, \(name)", seed: seed, limit: limit, calls: amodb.receivedRequests,
            requests: requests, deadline: deadline)
        print(report.summary(timeline: timeline), terminator: "")
        let failed = report.busiestCount > limit || !report.violations.isEmpty
        if failed {
            print(report.details(timeline: timeline), terminator: "")
            for replica in replicas {
                print("  \(replica.name)'s warnings and errors but the budget's refusals, the last 40 of every life:")
                for line in replica.warnings(last: 40, excluding: ["upstream budget spent"]) { print("    \(line)") }
            }
        }
        let window = report.busiest.map {
            "from \(timeline.offset(report.calls[$0.indices.lowerBound].receivedAt))"
                + " to \(timeline.offset(report.calls[$0.indices.upperBound].receivedAt))"
        }
        #expect(
            report.busiestCount <= limit,
            """
            \(name): \(report.busiestCount) calls reached amodb in one 60 s window (\(window ?? "")), over the \
            key's limit of \(limit); \(report.callsOverLimit) calls were over it in their window. Seed \(seed): \
            the timeline and the window's calls are printed above.
            """)
        #expect(
            report.violations.count == 0,
            """
            \(name): \(report.violations.count) of \(report.requests.count) client requests were answered wrongly, \
            the first: \(report.violations.first.map { "\($0.request.target): \($0.problem)" } ?? ""). Seed \(seed).
            """)
        #expect(
            report.hung == 0, "\(name): \(report.hung) client requests took longer than \(deadline) s. Seed \(seed).")
    }

    // MARK: The setting

    /// The stand-in amodb on port 0 with the key's limit, keeping every call it receives.
    private static func startAmodb() throws -> AmodbSandbox {
        let amodb = AmodbSandbox(configuration: .init(requestsPerMinute: limit, recordLimit: 1_000_000))
        _ = try amodb.start()
        return amodb
    }

    /// What every replica runs with, as an operator would set it.
    private static func environment(amodb: AmodbSandbox, fleetSize: Int) -> [String: String] {
        [
            "AMODB_UPSTREAM_URL": amodb.baseURL,
            "AMODB_KEY": amodb.configuration.apiKey,
            "AMODB_RATE_LIMIT": String(limit),
            "AMODB_MISS_WAIT": "1",
            "AMODB_CLIENT_SHARE": "0.25",
            // The clients' addresses come in X-Forwarded-For from the test, on loopback.
            "AMODB_TRUSTED_PROXIES": "127.0.0.1/32",
            "AMODB_ACCESS_LOG": "off",
            // The most replicas the operator runs (harmless to a proxy that does not know it).
            "AMODB_FLEET_SIZE": String(fleetSize),
        ]
    }

    /// The trending lists, the configuration and the ten most famous movies: asked again and again.
    private static func warmPaths(_ amodb: AmodbSandbox) -> [ChaosTraffic.Path] {
        let lists = ["all", "movie", "tv", "person"].flatMap { media in
            ["day", "week"].map { ChaosTraffic.Path("/3/trending/\(media)/\($0)") }
        }
        let movies = amodb.movieIDs.prefix(10).map { ChaosTraffic.Path("/3/movie/\($0)") }
        return lists + movies + [ChaosTraffic.Path("/3/configuration")]
    }

    /// Movie details in the other 13 languages, plain, with credits, or with credits and
    /// ratings, in the seed's order, each asked once; every tenth is an id amodb does not have.
    private static func coldPaths(_ amodb: AmodbSandbox, seed: UInt64) -> [ChaosTraffic.Path] {
        var existing: [ChaosTraffic.Path] = []
        for id in amodb.movieIDs {
            for language in AmodbLanguage.base.dropFirst() {
                for appended in ["", "&append_to_response=credits", "&append_to_response=credits,ratings"] {
                    existing.append(ChaosTraffic.Path("/3/movie/\(id)?language=\(language)\(appended)"))
                }
            }
        }
        var generator = SplitMix64(seed: seed ^ 0x636F_6C64)
        generator.shuffle(&existing)
        var paths: [ChaosTraffic.Path] = []
        for (index, path) in existing.enumerated() {
            if index % 9 == 8 { paths.append(ChaosTraffic.Path("/3/movie/\(9_000_000 + index)", exists: false)) }
            paths.append(path)
        }
        return paths
    }

    // MARK: Replicas

    /// Starts every replica, waits until each listens, runs `body`, and kills them all
    /// afterwards, whether `body` returns or throws.
    private static func withRunning(_ replicas: [ProxyReplica], _ body: () async throws -> Void) async throws {
        do {
            for replica in replicas { try replica.launch() }
            for replica in replicas {
                let port = await replica.waitUntilListening()
                try #require(port != nil, "\(replica.name) did not start listening within 30 s")
            }
            try await body()
        } catch {
            for replica in replicas { await replica.kill() }
            throw error
        }
        for replica in replicas { await replica.kill() }
    }

    /// Whether every replica counts all of them alive and Redis up.
    private static func allSeeEachOther(_ replicas: [ProxyReplica]) async -> Bool {
        for replica in replicas {
            guard let port = replica.endpoint?.port, let samples = try? await metrics(port: port),
                (try? samples.value("amodb_proxy_replicas")) == Double(replicas.count),
                (try? samples.value("amodb_proxy_redis_up")) == 1
            else { return false }
        }
        return true
    }

    /// `/metrics` of the replica at `port`.
    private static func metrics(port: Int) async throws -> PrometheusSamples {
        try await offloaded {
            let connection = try RawHTTPConnection(port: port, timeout: 5)
            defer { connection.close() }
            try connection.send("GET /metrics HTTP/1.1\r\nHost: amodb-proxy.test\r\nConnection: close\r\n\r\n")
            guard let response = try connection.readResponse(), response.status == 200 else {
                throw RawHTTPError.malformed("no 200 from /metrics")
            }
            return try PrometheusSamples(response.text)
        }
    }

    // MARK: The seed

    /// `CHAOS_SEED` (decimal, or hexadecimal after `0x`), else drawn once for the whole run.
    static let seed: UInt64 = seedFromEnvironment ?? UInt64.random(in: 0...UInt64.max)

    /// Where the seed came from, for the first line a run prints.
    static var seedSource: String {
        seedFromEnvironment != nil ? "from CHAOS_SEED" : "drawn at random; replay it with CHAOS_SEED"
    }

    private static var seedFromEnvironment: UInt64? {
        guard let text = ProcessInfo.processInfo.environment["CHAOS_SEED"] else { return nil }
        return text.hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) : UInt64(text)
    }
}

/// Temporary state directories (`AMODB_STATE_DIR`), one per replica, kept across its lives.
struct StateDirectories {
    private let paths: [String]

    init(_ count: Int) {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("amodb-state-\(UUID().uuidString)")
        paths = (0..<count).map { base.appendingPathComponent("replica-\($0)").path }
    }

    subscript(index: Int) -> String { paths[index] }

    func remove() {
        for path in paths { try? FileManager.default.removeItem(atPath: path) }
    }
}
