import AmodbRedis
import AmodbRedisTestSupport
import Testing

/// The roster's script against a real redis-server: bounded work per beat, live replicas counted.
@Suite(
    .enabled(if: RedisServer.isInstalled, Comment(rawValue: RedisServer.notInstalledMessage)), .timeLimit(.minutes(1)))
struct ReplicaRosterTests {
    @Test func aBeatRemovesAtMostItsShareOfExpiredReplicasAndCountsOnlyLiveOnes() async throws {
        try await withRedisServer { server in
            try await withRedisClient(server.configuration()) { redis in
                let roster = ReplicaRoster(
                    client: redis, prefix: "p:", lifetimeMilliseconds: 3_000, maxRemovedPerBeat: 64)
                var expired: [RedisValue] = ["ZADD", "p:replicas"]
                for index in 0..<1_000 { expired += [1, .bulk("dead-\(index)")] }
                _ = try await redis.send(expired)
                #expect(try await roster.beat("a") == 1)
                #expect(try await redis.send(["ZCARD", "p:replicas"]).integer == 1_001 - 64)
                #expect(try await roster.beat("b") == 2)
                #expect(try await redis.send(["ZCARD", "p:replicas"]).integer == 1_002 - 128)
                try await roster.leave("a")
                #expect(try await roster.beat("b") == 1)
            }
        }
    }

    @Test func theRosterKeepsAtMostItsCapacityDroppingTheLongestUnseen() async throws {
        try await withRedisServer { server in
            try await withRedisClient(server.configuration()) { redis in
                let roster = ReplicaRoster(client: redis, prefix: "p:", lifetimeMilliseconds: 60_000, capacity: 10)
                for index in 0..<20 {
                    _ = try await roster.beat("r\(index)")
                    try await Task.sleep(for: .milliseconds(3))  // one score each: the oldest is unambiguous
                }
                #expect(try await redis.send(["ZCARD", "p:replicas"]).integer == 10)
                let kept = try #require(try await redis.send(["ZRANGE", "p:replicas", 0, -1]).array).compactMap(
                    \.string)
                #expect(kept.contains("r19"))
                #expect(!kept.contains("r0"))
                #expect(try await redis.send(["PTTL", "p:replicas"]).integer.map { $0 > 0 && $0 <= 60_000 } == true)
            }
        }
    }
}
