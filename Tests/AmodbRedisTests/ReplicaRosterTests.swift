import AmodbRedis
import AmodbRedisTestSupport
import Testing

/// The roster's script against a real redis-server: bounded work per beat, live replicas
/// counted, and members no beat could have written neither counted nor kept.
@Suite(
    .enabled(if: RedisServer.isInstalled, Comment(rawValue: RedisServer.notInstalledMessage)), .timeLimit(.minutes(1)))
struct ReplicaRosterTests {
    @Test func aBeatRemovesAtMostItsShareOfExpiredReplicasAndCountsOnlyLiveOnes() async throws {
        try await withRedisServer { server in
            try await withRedisClient(server.configuration()) { redis in
                // A long lifetime: the live members must not expire between two beats on a
                // loaded machine; the dead ones are scored at 1 ms after 1970.
                let roster = ReplicaRoster(
                    client: redis, prefix: "p:", lifetimeMilliseconds: 60_000, maxRemovedPerBeat: 64)
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

    /// Redis's own clock, in milliseconds: the clock the roster's scores are on.
    private static func redisNow(_ redis: RedisClient) async throws -> Int64 {
        let time = try #require(try await redis.send(["TIME"]).array)
        let seconds = try #require(time[0].string.flatMap(Int64.init))
        let micros = try #require(time[1].string.flatMap(Int64.init))
        return seconds * 1000 + micros / 1000
    }

    /// Adds `count` members named `name-<n>`, each scored `score`.
    private static func forge(_ redis: RedisClient, _ count: Int, named name: String, score: Int64) async throws {
        var command: [RedisValue] = ["ZADD", "amodb-proxy:replicas"]
        for index in 0..<count { command += [.integer(score), .bulk("\(name)-\(index)")] }
        _ = try await redis.send(command)
    }

    /// Whether `member` is in the set.
    private static func holds(_ redis: RedisClient, _ member: String) async throws -> Bool {
        !(try await redis.send(["ZSCORE", "amodb-proxy:replicas", .bulk(member)]).isNull)
    }

    /// How many members the set holds.
    private static func size(_ redis: RedisClient) async throws -> Int64? {
        try await redis.send(["ZCARD", "amodb-proxy:replicas"]).integer
    }

    /// Members scored far in the future never expire and outrank every live one: they must
    /// neither be counted nor push this replica's own member out of the set.
    @Test func fiveThousandMembersScoredFarInTheFutureNeitherBendTheCountNorTrimThisReplica() async throws {
        try await withRedisServer { server in
            try await withRedisClient(server.configuration()) { redis in
                // A long lifetime: this replica's own member must not expire between two beats
                // on a loaded machine, or the last beat would trim it with the forged ones.
                let roster = ReplicaRoster(client: redis, prefix: "amodb-proxy:", lifetimeMilliseconds: 30_000)
                try await Self.forge(redis, 5_000, named: "forged", score: 9_000_000_000_000_000)
                for _ in 0..<3 {
                    let counted = try await roster.beat("own")
                    #expect(counted == 1)
                    #expect(try await Self.holds(redis, "own"))
                }
                // Removed a share per beat, not all at once: the work of one beat stays bounded.
                #expect(try await Self.size(redis) == 5_001 - 3 * 64)
            }
        }
    }

    /// A score further ahead than the skew allowance was written by no beat: not counted,
    /// and removed, even when it is within a lifetime of now. One within the allowance
    /// (Redis's clock stepped back a little) still counts.
    @Test func membersScoredBeyondTheSkewAllowanceAheadAreNotCountedAndAreRemoved() async throws {
        try await withRedisServer { server in
            try await withRedisClient(server.configuration()) { redis in
                // A long lifetime and members well inside it, so a loaded machine's delay between
                // reading the time here and the beat cannot move either member across a bound:
                // the one within the allowance still counts if the beat's now has passed it.
                let roster = ReplicaRoster(
                    client: redis, prefix: "amodb-proxy:", lifetimeMilliseconds: 30_000, clockSkewMilliseconds: 1_000)
                let now = try await Self.redisNow(redis)
                try await Self.forge(redis, 40, named: "ahead", score: now + 20_000)
                try await Self.forge(redis, 1, named: "stepped-back", score: now + 500)
                let counted = try await roster.beat("own")
                #expect(counted == 2)
                #expect(try await Self.size(redis) == 2)
                #expect(try await Self.holds(redis, "own"))
                #expect(try await Self.holds(redis, "stepped-back-0"))
            }
        }
    }

    /// Forged members scored in the future, far ahead or a few seconds ahead, and many more
    /// than the roster's capacity: two live replicas each go on counting two, and both stay
    /// in the set, while the forged members are removed a share per beat.
    @Test func fiveThousandFutureMembersNeitherHideNorInflateALiveReplica() async throws {
        try await withRedisServer { server in
            try await withRedisClient(server.configuration()) { redis in
                // A long lifetime: a live member must not expire between two beats on a loaded machine.
                let roster = ReplicaRoster(client: redis, prefix: "amodb-proxy:", lifetimeMilliseconds: 30_000)
                #expect(try await roster.beat("a") == 1)
                #expect(try await roster.beat("b") == 2)
                let now = try await Self.redisNow(redis)
                try await Self.forge(redis, 2_500, named: "far", score: 9_000_000_000_000_000)
                try await Self.forge(redis, 2_500, named: "soon", score: now + 20_000)
                for _ in 0..<3 {
                    for replica in ["a", "b"] {
                        let counted = try await roster.beat(replica)
                        #expect(counted == 2, "\(replica) counts both live replicas")
                    }
                    #expect(try await Self.holds(redis, "a"))
                    #expect(try await Self.holds(redis, "b"))
                }
                #expect(try await Self.size(redis) == 5_002 - 6 * 64)
            }
        }
    }

    /// Beyond capacity, members scored ahead of now (within the allowance) are trimmed
    /// first, the furthest ahead first, then the oldest: a live replica beaten a moment
    /// ago is not pushed out by members that merely claim to be newer.
    @Test func beyondCapacityMembersScoredAheadAreTrimmedBeforeALiveReplica() async throws {
        try await withRedisServer { server in
            try await withRedisClient(server.configuration()) { redis in
                // A wide allowance, so that the forged members stay ahead of the beat's now and
                // within the allowance on a loaded machine.
                let roster = ReplicaRoster(
                    client: redis, prefix: "amodb-proxy:", lifetimeMilliseconds: 60_000, capacity: 3,
                    clockSkewMilliseconds: 30_000)
                #expect(try await roster.beat("a") == 1)
                #expect(try await roster.beat("b") == 2)
                let now = try await Self.redisNow(redis)
                try await Self.forge(redis, 5, named: "ahead", score: now + 10_000)
                try await Self.forge(redis, 1, named: "furthest", score: now + 20_000)
                #expect(try await roster.beat("a") == 3)
                #expect(try await Self.holds(redis, "a"))
                #expect(try await Self.holds(redis, "b"))
                #expect(try await !Self.holds(redis, "furthest-0"))
                #expect(try await Self.size(redis) == 3)
            }
        }
    }

    /// However many live members the set holds, a beat reports no more than the caller's
    /// bound, and no more than 1,024 when the caller gives none.
    @Test func theCountIsCappedAtTheCallersBound() async throws {
        try await withRedisServer { server in
            try await withRedisClient(server.configuration()) { redis in
                let now = try await Self.redisNow(redis)
                try await Self.forge(redis, 2_000, named: "live", score: now)
                let byDefault = ReplicaRoster(
                    client: redis, prefix: "amodb-proxy:", lifetimeMilliseconds: 60_000, capacity: 4_096)
                let counted = try await byDefault.beat("own")
                #expect(counted == 1_024)
                let capped = ReplicaRoster(
                    client: redis, prefix: "amodb-proxy:", lifetimeMilliseconds: 60_000, capacity: 4_096,
                    maximumCount: 16)
                let countedCapped = try await capped.beat("own")
                #expect(countedCapped == 16)
                #expect(try await Self.size(redis) == 2_001)
            }
        }
    }
}
