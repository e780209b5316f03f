import AmodbRedis
import AmodbRedisTestSupport
import AmodbTestSupport
import Synchronization
import Testing

/// The client in cluster mode against a real cluster of three masters with a replica each:
/// it finds its slot's master from any node, and follows that master through a kill (the
/// replica promoted), a manual failover and a migration of the slot, the last two without
/// one command failing.
@Suite(
    .enabled(if: RedisCluster.isInstalled, Comment(rawValue: RedisCluster.notInstalledMessage)),
    .timeLimit(.minutes(3)), .serialized)
struct RedisClusterClientTests {
    static let mode = RedisClusterMode(hashTag: "amodb-proxy:")!

    /// A cluster-mode configuration that starts from `node`.
    static func configuration(from node: RedisServer) -> RedisConfiguration {
        var configuration = node.configuration()
        configuration.cluster = mode
        return configuration
    }

    @Test func findsTheSlotsMasterFromAnyNodeAndKeepsEveryKeyInIt() async throws {
        try await withRedisCluster { cluster in
            let owner = try await cluster.master(ofSlot: Self.mode.slot)
            // Started from a node that does not serve the slot: a replica of another master.
            let other = try #require(try await cluster.masters().first { $0.port != owner.port })
            let start = try await cluster.replica(of: other)
            try await withRedisClient(Self.configuration(from: start)) { client in
                for index in 0..<20 {
                    try await client.set(Self.mode.keyPrefix + "k\(index)", Array("v\(index)".utf8))
                }
                #expect(try await client.get(Self.mode.keyPrefix + "k7") == Array("v7".utf8))
                let reply = try await client.run(
                    RedisScript("return redis.call('GET', KEYS[1]) .. redis.call('GET', KEYS[2])"),
                    keys: [Self.mode.keyPrefix + "k1", Self.mode.keyPrefix + "k2"])
                #expect(reply.string == "v1v2")
            }
            let count = try await cluster.send(
                ["CLUSTER", "COUNTKEYSINSLOT", .integer(Int64(Self.mode.slot))], to: owner)
            #expect(count.integer == 20)
        }
    }

    /// TLS on every node's port (the nodes announce their TLS ports) and a password: the
    /// map is asked for over TLS, logged in, and the slot's master followed through a kill.
    @Test func overTLSWithAPasswordItFindsAndFollowsTheSlotsMaster() async throws {
        let certificates = try await TestCertificates()
        defer { certificates.remove() }
        try await withRedisCluster(password: "cluster pw", tls: RedisServerTLS(certificates)) { cluster in
            let owner = try await cluster.master(ofSlot: Self.mode.slot)
            let start = try #require(cluster.nodes.first { $0.port != owner.port })
            var configuration = Self.configuration(from: start)
            // One connection: `WAIT` counts the replicas that have this connection's writes.
            configuration.connectionCount = 1
            #expect(configuration.endpoint.usesTLS && configuration.endpoint.password != nil)
            try await withRedisClient(configuration) { client in
                let key = Self.mode.keyPrefix + "n"
                #expect(try await client.incr(key) == 1)
                #expect(try await client.send(["WAIT", "1", "10000"]).integer == 1)
                try await cluster.killMaster(ofSlot: Self.mode.slot)
                var value: Int64?
                #expect(
                    await eventually(within: 30) {
                        value = try? await client.incr(key)
                        return value != nil
                    })
                #expect(value == 2)
            }
        }
    }

    @Test func aKeyOfAnotherSlotIsRefusedNotFollowed() async throws {
        try await withRedisCluster { cluster in
            let owner = try await cluster.master(ofSlot: Self.mode.slot)
            var elsewhere: String?
            for index in 0..<100
            where try await cluster.master(ofSlot: RedisSlot.of("other-\(index)")).port != owner.port {
                elsewhere = "other-\(index)"
                break
            }
            let key = try #require(elsewhere)
            try await withRedisClient(Self.configuration(from: owner)) { client in
                try await client.set(Self.mode.keyPrefix + "mine", [1])
                await #expect {
                    try await client.set(key, [2])
                } throws: { error in
                    guard case .server(let reply) = error as? RedisError else { return false }
                    return reply.code == "MOVED"
                }
                // The connections stayed with the slot's master.
                #expect(try await client.get(Self.mode.keyPrefix + "mine") == [1])
            }
        }
    }

    @Test func followsAMasterKilledToTheReplicaThatTookItsPlace() async throws {
        try await withRedisCluster { cluster in
            let seed = try await cluster.master(ofSlot: Self.mode.slot)
            var configuration = Self.configuration(from: seed)
            // One connection: `WAIT` counts the replicas that have this connection's writes.
            configuration.connectionCount = 1
            try await withRedisClient(configuration) { client in
                let key = Self.mode.keyPrefix + "n"
                #expect(try await client.incr(key) == 1)
                #expect(try await client.send(["WAIT", "1", "10000"]).integer == 1)
                // The seed itself dies: the client must ask the other nodes it learned of.
                let (_, promoted, elapsed) = try await cluster.killMaster(ofSlot: Self.mode.slot)
                print("RedisClusterClientTests: replica \(promoted.port) promoted \(elapsed) after the kill")
                var value: Int64?
                let followed = await eventually(within: 30) {
                    value = try? await client.incr(key)
                    return value != nil
                }
                #expect(followed, "the client did not reach the promoted master within 30 s")
                // The promoted replica had the write (replicated before the kill, `WAIT`): the counter goes on.
                #expect(value == 2)
            }
        }
    }

    @Test func followsAManualFailoverWithoutOneCommandFailing() async throws {
        try await withRedisCluster { cluster in
            let seed = try await cluster.master(ofSlot: Self.mode.slot)
            try await withRedisClient(Self.configuration(from: seed)) { client in
                let traffic = Traffic(client: client, prefix: Self.mode.keyPrefix)
                try await traffic.whileRunning {
                    let (_, newMaster, elapsed) = try await cluster.failover(ofSlot: Self.mode.slot)
                    print("RedisClusterClientTests: manual failover to \(newMaster.port) took \(elapsed)")
                }
                #expect(traffic.failures == [], "commands failed during the failover")
                #expect(traffic.succeeded > 20)
            }
        }
    }

    /// The slot moved one key at a time with pauses, so that commands meet `ASK` for the keys
    /// already moved and `TRYAGAIN` for a script whose keys are split, then `MOVED`.
    @Test func followsTheSlotMigratedUnderTrafficWithoutOneCommandFailing() async throws {
        try await withRedisCluster { cluster in
            let owner = try await cluster.master(ofSlot: Self.mode.slot)
            let target = try #require(try await cluster.masters().first { $0.port != owner.port })
            try await withRedisClient(Self.configuration(from: owner)) { client in
                let traffic = Traffic(client: client, prefix: Self.mode.keyPrefix)
                try await traffic.fill()
                let askedHalfway = Mutex<[UInt8]?>(nil)
                try await traffic.whileRunning {
                    try await cluster.migrate(
                        slot: Self.mode.slot, to: target, keysPerStep: 1, pauseBetweenSteps: .milliseconds(20)
                    ) { moved in
                        // A key already on the target while the slot is still the owner's:
                        // the owner answers ASK, whatever the traffic loop met meanwhile.
                        guard askedHalfway.withLock({ $0 == nil }), let key = moved.first else { return }
                        let value = try await client.get(key)
                        askedHalfway.withLock { $0 = value ?? [] }
                    }
                }
                #expect(traffic.failures == [], "commands failed during the migration")
                #expect(traffic.succeeded >= 3)
                #expect(askedHalfway.withLock { $0?.isEmpty == false }, "a moved key was not read halfway")
                // Commands met the migration half done: the client asked the target after ASKING.
                let stats = try await cluster.send(["INFO", "commandstats"], to: target).string ?? ""
                #expect(stats.contains("cmdstat_asking:calls="), "no ASKING reached \(target.port)")
                // Every key arrived, and the client now writes there.
                let count = try await cluster.send(
                    ["CLUSTER", "COUNTKEYSINSLOT", .integer(Int64(Self.mode.slot))], to: target)
                #expect(count.integer == Int64(Traffic.keys + 1))
                #expect(try await cluster.master(ofSlot: Self.mode.slot).port == target.port)
            }
        }
    }

    @Test func followsARedisCLIReshardOfTheSlotWithoutOneCommandFailing() async throws {
        try await withRedisCluster { cluster in
            let owner = try await cluster.master(ofSlot: Self.mode.slot)
            let target = try #require(try await cluster.masters().first { $0.port != owner.port })
            // redis-cli moves the source's slots lowest first: as many as it takes to reach ours.
            let first = try #require(try await cluster.slots(of: owner).min())
            try await withRedisClient(Self.configuration(from: owner)) { client in
                let traffic = Traffic(client: client, prefix: Self.mode.keyPrefix)
                try await traffic.fill()
                try await traffic.whileRunning {
                    let moved = try await cluster.reshardWithRedisCLI(
                        from: owner, to: target, slots: Self.mode.slot - first + 1)
                    #expect(moved.contains(Self.mode.slot))
                }
                #expect(traffic.failures == [], "commands failed during the reshard")
                #expect(try await cluster.master(ofSlot: Self.mode.slot).port == target.port)
            }
        }
    }
}

/// Commands in a loop while a test changes the cluster: a counter, a key written and read
/// back, and a script over two keys (which a migration may split), each checked.
private final class Traffic: Sendable {
    static let keys = 40
    let client: RedisClient
    let prefix: String
    private let state = Mutex<(succeeded: Int, failures: [String])>((0, []))

    init(client: RedisClient, prefix: String) {
        self.client = client
        self.prefix = prefix
    }

    var succeeded: Int { state.withLock { $0.succeeded } }
    var failures: [String] { state.withLock { $0.failures } }

    /// Writes the keys the loop reads, so that a migration has some to move.
    func fill() async throws {
        for index in 0..<Self.keys { try await client.set(prefix + "k\(index)", Array("\(index)".utf8)) }
    }

    /// Runs the loop until `change` returns, then once more.
    func whileRunning(_ change: () async throws -> Void) async throws {
        let running = Mutex(true)
        let loop = Task { [self] in
            var round = 0
            while running.withLock({ $0 }) {
                await once(round)
                round += 1
                try? await Task.sleep(for: .milliseconds(5))
            }
            await once(round)
        }
        defer { loop.cancel() }
        try await change()
        running.withLock { $0 = false }
        await loop.value
    }

    private func once(_ round: Int) async {
        let index = round % Self.keys
        do {
            let count = try await client.incr(prefix + "count")
            let value = Array("\(index)-\(count)".utf8)
            try await client.set(prefix + "k\(index)", value)
            let read = try await client.get(prefix + "k\(index)")
            let both = try await client.run(
                RedisScript("return redis.call('INCR', KEYS[1]) + #(redis.call('GET', KEYS[2]) or '')"),
                keys: [prefix + "count", prefix + "k\(index)"])
            guard read == value, both.integer == count + 1 + Int64(value.count) else {
                return state.withLock { $0.failures.append("round \(round): read \(read ?? []) script \(both)") }
            }
            state.withLock { $0.succeeded += 1 }
        } catch {
            state.withLock { $0.failures.append("round \(round): \(error)") }
        }
    }
}
