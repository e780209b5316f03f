import AmodbRedis
import AmodbRedisTestSupport
import AmodbTestSupport
import Testing

@testable import AmodbProxy

/// Redis Sentinel: replicas find the master through the sentinels, follow a failover within
/// seconds, and spend during it only their outage reserve (the new master's window is another
/// Redis process's: lost, a minute of reserve only), so the key's limit holds across it. Real servers: a master, its replica, and one sentinel (quorum 1).
@Suite(
    .enabled(if: RedisServer.isInstalled, Comment(rawValue: RedisServer.notInstalledMessage)), .timeLimit(.minutes(2)))
struct RedisSentinelTests {
    static let master = "amodb"

    /// Without a password, and with `requirepass` on the master and its replica (the replicas
    /// then log in before they ask a server its `ROLE`, which it answers only after `AUTH`).
    @Test(arguments: [nil, "sentinel-test-password"])
    func twoReplicasFollowAFailoverAndTheLimitHoldsAcrossIt(password: String?) async throws {
        let auth = password.map { ["--masterauth", $0] } ?? []
        try await withRedisServer(password: password, arguments: auth) { primary in
            try await withRedisServer(
                password: password, arguments: auth + ["--replicaof", "127.0.0.1", String(primary.port)]
            ) { secondary in
                try await withRedisClient(secondary.configuration()) { observer in
                    #expect(
                        await eventually {
                            let info = try? await observer.send(["INFO", "replication"])
                            return info?.string?.contains("master_link_status:up") == true
                        })
                }
                try await withServer(try await RedisServer.startSentinel(monitoring: primary, name: Self.master)) {
                    sentinel in
                    try await withRedisClient(sentinel.configuration()) { asker in
                        // The sentinel knows the replica it will promote.
                        #expect(
                            await eventually {
                                let replicas = try? await asker.send(["SENTINEL", "replicas", .bulk(Self.master)])
                                guard case .array(let list)? = replicas else { return false }
                                return !list.isEmpty
                            })
                        try await followsTheFailover(
                            primary: primary, secondary: secondary, sentinel: asker, at: sentinel)
                    }
                }
            }
        }
    }

    private func followsTheFailover(
        primary: RedisServer, secondary: RedisServer, sentinel: RedisClient, at sentinelServer: RedisServer
    ) async throws {
        var redis = RedisConfiguration(
            endpoint: RedisEndpoint(host: Self.master, password: primary.password.map(RedisPassword.init))
        ).withTestTimeouts()
        redis.sentinels = RedisSentinels(addresses: [sentinelServer.endpoint], masterName: Self.master)
        let limit = 20
        let fleet = try Fleet(
            2, redis: redis, upstream: ScriptedUpstream(fallback: RedisOutageTests.movie),
            adjust: {
                $0.rateLimit = limit
                $0.fleetSize = 2
                $0.missWait = 0
            })
        try await withServer(fleet) { fleet in
            #expect(await fleet.seeEachOther())
            var id = 0
            func ask(_ replica: Int) async throws -> Int {
                id += 1
                return try await fleet[replica].get("/3/movie/\(id)").status
            }
            for index in 0..<6 { #expect(try await ask(index % 2) == 200) }
            let before = fleet.upstream.calls.count
            #expect(before == 6)

            // The master dies; clients keep asking every 100 ms until both replicas use the new one.
            let killed = ContinuousClock.now
            await primary.stop()
            var during: [Int] = []
            var followed: Duration?
            while ContinuousClock.now - killed < .seconds(30) {
                during.append(try await ask(during.count % 2))
                if await bothUp(fleet) {
                    followed = ContinuousClock.now - killed
                    break
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            let following = try #require(followed, "the replicas did not follow the failover within 30 s")
            print("RedisSentinelTests: both replicas on the new master \(following) after the kill")
            #expect(following < .seconds(15))
            let address = try await sentinel.send(["SENTINEL", "get-master-addr-by-name", .bulk(Self.master)])
            if case .array(let parts) = address {
                #expect(parts.last?.string == String(secondary.port))
            } else {
                Issue.record("no master address: \(address)")
            }
            // Calls granted between the kill and both replicas following: only through a
            // master that answered (a failing call grants nothing, as in an outage).
            let duringFailover = fleet.upstream.calls.count - before
            print("RedisSentinelTests: \(during.count) requests during the failover, \(duringFailover) calls to amodb")
            #expect(during.allSatisfy { $0 == 200 || $0 == 503 })

            // Then the rest of the window, shared again: the fleet's calls in this minute stay within the limit.
            for _ in 0..<30 { _ = try await ask(id % 2) }
            print("RedisSentinelTests: \(fleet.upstream.calls.count) calls to amodb in total, limit \(limit)")
            #expect(fleet.upstream.calls.count <= limit)
            // Sharing resumed through the new master: a fill by one replica serves the other.
            #expect(try await fleet[0].get("/3/movie/1").status == 200)
        }
    }

    private func bothUp(_ fleet: Fleet) async -> Bool {
        for replica in fleet.replicas {
            guard let samples = try? await replica.metrics(), (try? samples.value("amodb_proxy_redis_up")) == 1,
                (try? samples.value("amodb_proxy_redis_outage")) == 0
            else { return false }
        }
        return true
    }
}
