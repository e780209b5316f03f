import AmodbProxy
import AmodbRedisTestSupport
import AmodbTestSupport
import Testing

/// A herd spread over every replica makes one call to amodb.
@Suite(.enabled(if: RedisServer.isInstalled, Comment(rawValue: RedisServer.notInstalledMessage)), .timeLimit(.minutes(1)))
struct FleetCoalescingTests {
    @Test func eightyConcurrentRequestsForOneColdPathSpreadOverThreeReplicasMakeOneUpstreamCall() async throws {
        let upstream = ScriptedUpstream()
        upstream.hold()   // the one call stays in flight until all eighty have asked
        try await withFleet(3, upstream: upstream) { (fleet: Fleet, _: RedisServer) async throws in
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<80 {
                    let replica = fleet[index % 3]
                    group.addTask { try await replica.get("/3/trending/all/day").status }
                }
                // Every request has joined a lease (each replica's own, or led its own) and one call is held.
                #expect(await eventually { upstream.heldCount == 1 && fleet.misses == 80 })
                upstream.release()
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.count == 80)
            #expect(statuses.allSatisfy { $0 == 200 })
            #expect(upstream.calls == ["/trending/all/day"])
        }
    }

    @Test func aReplicaWhoseLeaseHolderNeverAnnouncesFetchesItselfOnceTheLeaseLapses() async throws {
        try await withFleet(1, adjust: { $0.upstreamTimeout = 0.5 }) { (fleet: Fleet, server: RedisServer) async throws in
            // Another replica took the lease and died: no announcement, no entry.
            try await withRedisClient(server.configuration()) { redis in
                _ = try await redis.set("amodb-proxy:lease:/movie/550", Array("gone".utf8), condition: .ifNotExists, expiry: .milliseconds(1_500))
            }
            let answer = try await fleet[0].get("/3/movie/550")
            #expect(answer.status == 200)
            #expect(fleet.upstream.calls == ["/movie/550"])
        }
    }
}
