import AmodbRedis
import AmodbRedisTestSupport
import AmodbTestSupport
import Testing

/// The test support's Redis Cluster, against real `redis-server` nodes: it forms, its slot
/// function is Redis's own, and each fault or change it makes (a master killed, a manual
/// failover, a slot migrated by hand or by `redis-cli`) has happened, as the nodes tell it,
/// when it returns. Serialized: each test runs six servers, and a 2-core machine running
/// several clusters at once would stretch every failure detection past its waits.
@Suite(
    .enabled(if: RedisCluster.isInstalled, Comment(rawValue: RedisCluster.notInstalledMessage)), .serialized,
    .timeLimit(.minutes(3)))
struct RedisClusterSupportTests {
    /// Short enough that a killed master is replaced in a few seconds, long enough that a
    /// busy machine does not make a live node look dead.
    static let nodeTimeout = Duration.milliseconds(1000)

    @Test func formsThreeMastersEachWithAReplicaServingEverySlot() async throws {
        try await withRedisCluster(nodeTimeout: Self.nodeTimeout) { cluster in
            print("cluster of \(cluster.nodes.count) nodes started in \(cluster.startDuration)")
            #expect(cluster.nodes.count == 6)
            let masters = try await cluster.masters()
            #expect(masters.count == 3)
            for master in masters {
                let replicas = try await cluster.replicas(of: master)
                #expect(replicas.count == 1)
            }
            for node in cluster.nodes {
                let info = try await cluster.send(["CLUSTER", "INFO"], to: node).string ?? ""
                #expect(info.contains("cluster_state:ok"))
                #expect(info.contains("cluster_slots_assigned:16384"))
                #expect(info.contains("cluster_known_nodes:6"))
                #expect(info.contains("cluster_size:3"))
            }
            // The seed is a node a client can log in to, and every slot has a master.
            #expect(cluster.seedEndpoint.port == cluster.nodes[0].port)
            for slot in [0, 5460, 5461, 10922, 10923, 16383] {
                let master = try await cluster.master(ofSlot: slot)
                let key = try #require(Self.key(inSlot: slot))
                let reply = try await cluster.send(["SET", .bulk(key), "v"], to: master)
                #expect(reply.string == "OK")
            }
        }
    }

    @Test func slotOfAKeyIsWhatClusterKeyslotSays() async throws {
        // One node with cluster support answers CLUSTER KEYSLOT; no cluster is needed.
        try await withRedisServer(arguments: ["--cluster-enabled", "yes"]) { server in
            var keys = [
                "", "a", "foo", "123456789", "{}", "{", "}", "}{", "{}{a}", "}{a}", "a{b}c{d}", "{a}{b}", "{{a}}",
                "{user1000}.following", "{user1000}.followers", "foo{}{bar}", "foo{{bar}}zap", "foo{bar}{zap}",
                "{}a", "a{", "a}", "a{}", "{a", "a{b", "é{ü}", "日本{語}", "\u{1F600}",
            ]
            var generator = SystemRandomNumberGenerator()
            let alphabet = Array("ab{}x:é")
            for _ in 0..<500 {
                let length = Int.random(in: 0...12, using: &generator)
                keys.append(String((0..<length).map { _ in alphabet.randomElement(using: &generator)! }))
            }
            var configuration = server.configuration()
            configuration.connectionCount = 1
            try await withRedisClient(configuration) { client in
                let replies = await client.pipeline(keys.map { ["CLUSTER", "KEYSLOT", .bulk($0)] })
                for (key, reply) in zip(keys, replies) {
                    let slot = try reply.get().integer
                    #expect(slot.map(Int.init) == RedisSlot.of(key), "key \(key)")
                }
            }
        }
        // Redis's own examples (cluster specification): CRC16 of "123456789" is 0x31C3.
        #expect(RedisSlot.of("123456789") == 0x31C3 % 16_384)
        #expect(RedisSlot.of("{user1000}.following") == RedisSlot.of("user1000"))
        #expect(RedisSlot.of("foo{{bar}}zap") == RedisSlot.of("{bar"))
        #expect(RedisSlot.of("foo{bar}{zap}") == RedisSlot.of("bar"))
    }

    @Test func killingAMasterPromotesItsReplicaAndTheOldMasterRejoinsAsReplica() async throws {
        try await withRedisCluster(nodeTimeout: Self.nodeTimeout) { cluster in
            let key = "{kill}:before"
            let slot = RedisSlot.of(key)
            let master = try await cluster.master(ofSlot: slot)
            let replica = try await cluster.replica(of: master)
            #expect(try await cluster.send(["SET", .bulk(key), "kept"], to: master).string == "OK")
            // The write is on the replica before the kill, so the promoted node must have it.
            #expect(try await cluster.send(["WAIT", "1", "10000"], to: master).integer == 1)

            let (killed, promoted, elapsed) = try await cluster.killMaster(ofSlot: slot)
            print("master \(killed.port) killed; replica \(promoted.port) promoted and agreed in \(elapsed)")
            #expect(killed.port == master.port)
            #expect(promoted.port == replica.port)
            #expect(!killed.isRunning)
            #expect(try await cluster.master(ofSlot: slot).port == replica.port)
            #expect(try await cluster.send(["GET", .bulk(key)], to: promoted).string == "kept")
            let after = "{kill}:after"
            #expect(try await cluster.send(["SET", .bulk(after), "written"], to: promoted).string == "OK")
            let role = try await cluster.send(["ROLE"], to: promoted).array?.first?.string
            #expect(role == "master")

            // Back on its port with its nodes.conf: a replica of the node that took its slots.
            try await cluster.restart(killed)
            #expect(killed.isRunning)
            let replicas = try await cluster.replicas(of: promoted)
            #expect(replicas.map(\.port) == [killed.port])
            let oldRole = try await cluster.send(["ROLE"], to: killed).array?.first?.string
            #expect(oldRole == "slave")
            #expect(try await cluster.master(ofSlot: slot).port == promoted.port)
        }
    }

    @Test func manualFailoverSwapsMasterAndReplica() async throws {
        try await withRedisCluster(nodeTimeout: Self.nodeTimeout) { cluster in
            let slot = RedisSlot.of("failover")
            let master = try await cluster.master(ofSlot: slot)
            let replica = try await cluster.replica(of: master)
            let (oldMaster, newMaster, elapsed) = try await cluster.failover(ofSlot: slot)
            print("manual failover from \(oldMaster.port) to \(newMaster.port) agreed in \(elapsed)")
            #expect(oldMaster.port == master.port)
            #expect(newMaster.port == replica.port)
            #expect(oldMaster.isRunning)
            #expect(try await cluster.master(ofSlot: slot).port == replica.port)
            #expect(try await cluster.replica(of: replica).port == master.port)
            #expect(try await cluster.send(["ROLE"], to: replica).array?.first?.string == "master")
            #expect(try await cluster.send(["ROLE"], to: master).array?.first?.string == "slave")
            #expect(try await cluster.send(["SET", "failover", "v"], to: replica).string == "OK")
        }
    }

    @Test func migratingASlotMovesItsKeysAndRedisCLIReshardMovesSlots() async throws {
        try await withRedisCluster(nodeTimeout: Self.nodeTimeout) { cluster in
            let keys = (0..<20).map { "{migrate}:\($0)" }
            let slot = RedisSlot.of(keys[0])
            let source = try await cluster.master(ofSlot: slot)
            for key in keys {
                #expect(
                    try await cluster.send(["SET", .bulk(key), .bulk("value of \(key)")], to: source).string == "OK")
            }
            let target = try #require(try await cluster.masters().first { $0.port != source.port })
            try await cluster.migrate(slot: slot, to: target, keysPerStep: 3, pauseBetweenSteps: .milliseconds(10))

            #expect(try await cluster.master(ofSlot: slot).port == target.port)
            for node in cluster.nodes {
                // Every node, replicas included, tells a client the slot is the target's now.
                let nodes = try await cluster.send(["CLUSTER", "NODES"], to: node).string ?? ""
                let targetLine = nodes.split(separator: "\n").first { $0.hasPrefix(cluster.id(of: target)) }
                #expect(targetLine?.split(separator: " ").contains("\(slot)") == true, "\(node.port): \(nodes)")
            }
            let counted = try await cluster.send(["CLUSTER", "COUNTKEYSINSLOT", .bulk("\(slot)")], to: target)
            #expect(counted.integer == 20)
            let left = try await cluster.send(["CLUSTER", "COUNTKEYSINSLOT", .bulk("\(slot)")], to: source)
            #expect(left.integer == 0)
            for key in keys {
                let keyslot = try await cluster.send(["CLUSTER", "KEYSLOT", .bulk(key)], to: target).integer
                #expect(keyslot.map(Int.init) == slot)
                #expect(try await cluster.send(["GET", .bulk(key)], to: target).string == "value of \(key)")
            }
            // The source sends a client on: MOVED to the target.
            await #expect {
                try await cluster.send(["GET", .bulk(keys[0])], to: source)
            } throws: { error in
                "\(error)".contains("MOVED \(slot) 127.0.0.1:\(target.port)")
            }

            // The real redis-cli, the other way round between two masters.
            let from = try #require(try await cluster.masters().first { $0.port != target.port })
            let moved = try await cluster.reshardWithRedisCLI(from: from, to: target, slots: 10)
            #expect(moved.count == 10)
            for slot in moved {
                #expect(try await cluster.master(ofSlot: slot).port == target.port)
            }
        }
    }

    @Test(.enabled(if: TestCertificates.executable != nil, "openssl is not installed"))
    func withAPasswordAndTLSItFormsMigratesAndFailsOver() async throws {
        let certificates = try await TestCertificates()
        defer { certificates.remove() }
        let tls = RedisServerTLS(certificates)
        try await withRedisCluster(password: "cluster pw", tls: tls, nodeTimeout: Self.nodeTimeout) { cluster in
            print("TLS cluster with a password started in \(cluster.startDuration)")
            // The seed endpoint logs in over TLS as a client would.
            #expect(cluster.seedEndpoint.usesTLS)
            var configuration = RedisConfiguration(endpoint: cluster.seedEndpoint).withTestTimeouts()
            configuration.tls = RedisTLSFiles(caFile: tls.authority.certificate)
            try await withRedisClient(configuration) { client in
                let info = try await client.send(["CLUSTER", "INFO"]).string ?? ""
                #expect(info.contains("cluster_state:ok"))
            }
            // MIGRATE with AUTH, over the TLS the nodes speak to each other.
            let key = "{secure}:k"
            let slot = RedisSlot.of(key)
            let source = try await cluster.master(ofSlot: slot)
            #expect(try await cluster.send(["SET", .bulk(key), "v"], to: source).string == "OK")
            let target = try #require(try await cluster.masters().first { $0.port != source.port })
            try await cluster.migrate(slot: slot, to: target)
            #expect(try await cluster.send(["GET", .bulk(key)], to: target).string == "v")
            // Replication (masterauth, tls-replication) and the bus (tls-cluster) carry a failover.
            #expect(try await cluster.send(["WAIT", "1", "10000"], to: target).integer == 1)
            let (_, promoted, elapsed) = try await cluster.killMaster(ofSlot: slot)
            print("TLS master killed; replica \(promoted.port) promoted and agreed in \(elapsed)")
            #expect(try await cluster.send(["GET", .bulk(key)], to: promoted).string == "v")
        }
    }

    /// A key hashing to `slot`, found by trying `key0`, `key1`, … (every slot has one among the first few hundred thousand).
    static func key(inSlot slot: Int) -> String? {
        (0..<1_000_000).lazy.map { "key\($0)" }.first { RedisSlot.of($0) == slot }
    }
}
