import AmodbCompression
import AmodbRedis
import AmodbRedisTestSupport
import AmodbTestSupport
import Synchronization
import Testing

@testable import AmodbProxy

/// Replicas on a real Redis Cluster (three masters with a replica each, `AMODB_REDIS_CLUSTER`
/// on), beyond the fleet's tests that run on one too (`RedisTransport.cluster`): every key in
/// the prefix's one slot; a master killed and its replica promoted is followed within the
/// key's limit; the proxy's slot resharded with `redis-cli --cluster reshard` while clients
/// ask is followed without one error answer.
@Suite(
    .enabled(if: RedisCluster.isInstalled, Comment(rawValue: RedisCluster.notInstalledMessage)),
    .timeLimit(.minutes(3)), .serialized)
struct RedisClusterFleetTests {
    static let mode = clusterMode

    @Test func oneCacheWithEveryKeyInThePrefixsSlot() async throws {
        try await withClusterFleet(2) { fleet, cluster in
            let first = try await fleet[0].get("/3/movie/550")
            #expect(first.status == 200)
            let second = try await fleet[1].get("/3/movie/550")
            #expect(second.status == 200 && second.body == first.body)
            #expect(second.header("Cache-Status")?.hasSuffix("; detail=shared") == true)
            #expect(fleet.upstream.calls == ["/movie/550"])
            // The cache entry, the budget's window, the roster: all on the slot's master, all tagged.
            let owner = try await cluster.master(ofSlot: Self.mode.slot)
            let keys =
                try await cluster.send(
                    ["CLUSTER", "GETKEYSINSLOT", .integer(Int64(Self.mode.slot)), 100], to: owner
                ).array?.compactMap(\.string) ?? []
            #expect(keys.contains("{amodb-proxy:}cache:/movie/550"), "\(keys)")
            #expect(keys.contains("{amodb-proxy:}budget:state") && keys.contains("{amodb-proxy:}replicas"), "\(keys)")
            #expect(keys.allSatisfy { $0.hasPrefix("{amodb-proxy:}") }, "\(keys)")
            for master in try await cluster.masters() where master.port != owner.port {
                #expect(try await cluster.send(["DBSIZE"], to: master).integer == 0, "keys on \(master.port)")
            }
        }
    }

    @Test func twoReplicasFollowAMasterKilledAndTheLimitHoldsAcrossIt() async throws {
        let limit = 20
        let upstream = ScriptedUpstream(
            fallback: .response(UpstreamResponse(status: 200, body: Array(ScriptedUpstream.movieDetails.utf8))))
        try await withClusterFleet(
            2, upstream: upstream,
            adjust: {
                $0.rateLimit = limit
                $0.fleetSize = 2
                $0.missWait = 0
            }
        ) { fleet, cluster in
            var id = 0
            func ask(_ replica: Int) async throws -> Int {
                id += 1
                return try await fleet[replica].get("/3/movie/\(id)").status
            }
            for index in 0..<6 { #expect(try await ask(index % 2) == 200) }
            #expect(upstream.calls.count == 6)

            let killed = ContinuousClock.now
            let kill = Task { try await cluster.killMaster(ofSlot: Self.mode.slot) }
            var during: [Int] = []
            var followed: Duration?
            while ContinuousClock.now - killed < .seconds(60) {
                during.append(try await ask(during.count % 2))
                if ContinuousClock.now - killed > .seconds(1), await Self.bothUp(fleet) {
                    followed = ContinuousClock.now - killed
                    break
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            let promotion = try await kill.value
            let following = try #require(followed, "the replicas did not follow the failover within 60 s")
            let callsDuring = upstream.calls.count - 6
            print(
                "RedisClusterFleetTests: replica \(promotion.promoted.port) promoted \(promotion.elapsed) after the kill; both replicas on it \(following) after; \(during.count) requests meanwhile, \(callsDuring) calls to amodb"
            )
            #expect(during.allSatisfy { $0 == 200 || $0 == 503 })
            for _ in 0..<30 { _ = try await ask(id % 2) }
            let busiest = BusiestWindow(of: upstream.callInstants, length: .seconds(60))?.count ?? 0
            print(
                "RedisClusterFleetTests: \(upstream.calls.count) calls in all, at most \(busiest) in one 60 s, limit \(limit)"
            )
            #expect(busiest <= limit)
            // Sharing resumed through the new master: a fill by one replica serves the other.
            #expect(try await fleet[0].get("/3/movie/1").header("Cache-Status")?.contains("hit") == true)
        }
    }

    /// `redis-cli --cluster reshard` moves the proxy's slot (and those before it) to another
    /// master while clients ask for known and new paths: every answer is a 200.
    @Test func aReshardOfTheProxysSlotUnderTrafficGivesNoErrorAnswer() async throws {
        try await withClusterFleet(2, adjust: { $0.rateLimit = 120 }) { fleet, cluster in
            for id in 1...10 { #expect(try await fleet[id % 2].get("/3/movie/\(id)").status == 200) }
            let owner = try await cluster.master(ofSlot: Self.mode.slot)
            let target = try #require(try await cluster.masters().first { $0.port != owner.port })
            let first = try #require(try await cluster.slots(of: owner).min())
            let finished = Mutex(false)
            let reshard = Task {
                defer { finished.withLock { $0 = true } }
                return try await cluster.reshardWithRedisCLI(from: owner, to: target, slots: Self.mode.slot - first + 1)
            }
            var statuses: [Int: Int] = [:]
            var round = 0
            var fresh = 100
            while !finished.withLock({ $0 }) || round < 20 {
                round += 1
                var path = "/3/movie/\(round % 10 + 1)"
                // A new path every tenth request: within the reserve a lost window leaves.
                if round % 10 == 0, fresh < 110 {
                    fresh += 1
                    path = "/3/movie/\(fresh)"
                }
                let status = try await fleet[round % 2].get(path).status
                statuses[status, default: 0] += 1
                try await Task.sleep(for: .milliseconds(20))
            }
            let moved = try await reshard.value
            #expect(moved.contains(Self.mode.slot))
            print("RedisClusterFleetTests: during the reshard \(round) requests: \(statuses)")
            #expect(statuses.keys.sorted() == [200], "\(statuses)")
            #expect(try await cluster.master(ofSlot: Self.mode.slot).port == target.port)
            // The replicas write to the new master: a new fill is shared from there.
            #expect(try await fleet[0].get("/3/movie/200").status == 200)
            #expect(try await fleet[1].get("/3/movie/200").header("Cache-Status")?.hasSuffix("detail=shared") == true)
        }
    }

    /// Pointed at a cluster's node without `AMODB_REDIS_CLUSTER`, a replica says once what to set.
    @Test func aReplicaNotToldItIsOnAClusterSaysOnceWhatToSet() async throws {
        try await withRedisCluster { cluster in
            let fleet = try Fleet(
                1, redis: cluster.nodes[0].configuration(), upstream: ScriptedUpstream(fallback: RedisOutageTests.movie)
            )
            try await withServer(fleet) { fleet in
                for id in 1...5 { _ = try await fleet[0].get("/3/movie/\(id)") }
                let hint = "set AMODB_REDIS_CLUSTER=on"
                #expect(await eventually { fleet.logs[0].all.contains { $0.contains(hint) } })
                #expect(fleet.logs[0].all.filter { $0.contains(hint) }.count == 1)
            }
        }
    }

    private static func bothUp(_ fleet: Fleet) async -> Bool {
        for replica in fleet.replicas {
            guard let samples = try? await replica.metrics(), (try? samples.value("amodb_proxy_redis_up")) == 1,
                (try? samples.value("amodb_proxy_redis_outage")) == 0
            else { return false }
        }
        return true
    }
}
