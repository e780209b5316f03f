import AmodbProxy
import AmodbRedis
import AmodbRedisTestSupport
import AmodbTestSupport
import Testing

/// Replicas find each other through one sorted set: the count does not depend on what
/// else the database holds, and a replica that stops beating drops out after its lifetime.
@Suite(
    .enabled(if: RedisServer.isInstalled, Comment(rawValue: RedisServer.notInstalledMessage)), .timeLimit(.minutes(1)))
struct ReplicaRosterTests {
    @Test func threeReplicasAmongTwoHundredThousandUnrelatedKeysEachCountThreeAndNothingIsScanned() async throws {
        try await withRedisServer(arguments: ["--enable-debug-command", "yes"]) { server in
            try await withRedisClient(server.configuration(commandTimeout: .seconds(10))) { redis in
                _ = try await redis.send(["DEBUG", "POPULATE", 200_000, "unrelated"])
                #expect(try await redis.send(["DBSIZE"]).integer == 200_000)
                _ = try await redis.send(["CONFIG", "RESETSTAT"])
                let upstream = ScriptedUpstream(
                    fallback: .response(UpstreamResponse(status: 200, body: Array(ScriptedUpstream.movieDetails.utf8))))
                try await withServer(try Fleet(3, redis: server.configuration(), upstream: upstream)) {
                    (fleet: Fleet) async throws in
                    #expect(await fleet.seeEachOther())
                    // Beats go on counting three.
                    try await Task.sleep(for: .seconds(2))
                    #expect(await fleet.allSeeEachOther())
                    let stats = try #require(try await redis.send(["INFO", "commandstats"]).string)
                    #expect(!stats.contains("cmdstat_scan"))
                    #expect(!stats.contains("cmdstat_keys"))
                    #expect(stats.contains("cmdstat_evalsha") || stats.contains("cmdstat_eval"))
                }
            }
        }
    }

    @Test func aReplicaThatStopsBeatingDropsOutAfterItsLifetime() async throws {
        try await withFleet(2) { (fleet: Fleet, server: RedisServer) async throws in
            #expect(await fleet.seeEachOther())
            func counts() async throws -> [Double] {
                var counts: [Double] = []
                for replica in fleet.replicas {
                    counts.append(try await replica.metrics().value("amodb_proxy_replicas"))
                }
                return counts
            }
            // A third replica beats, on Redis's clock, until both count it (however late a
            // loaded machine runs their beats); then never again.
            var lastBeat = ContinuousClock.now
            let counted = try await withRedisClient(server.configuration()) { redis in
                try await eventually(within: 30) {
                    let time = try #require(try await redis.send(["TIME"]).array)
                    let seconds = try #require(time[0].string.flatMap(Int64.init))
                    let micros = try #require(time[1].string.flatMap(Int64.init))
                    lastBeat = ContinuousClock.now
                    _ = try await redis.send([
                        "ZADD", "amodb-proxy:replicas", .integer(seconds * 1000 + micros / 1000), "gone-replica",
                    ])
                    return (try? await counts()) == [3, 3]
                }
            }
            #expect(counted, "both replicas counted the third")
            #expect(await eventually(within: 30) { (try? await counts()) == [2, 2] })
            // Not before its lifetime (three beats of one second) from its last beat.
            #expect(ContinuousClock.now - lastBeat >= .milliseconds(1_500))
        }
    }

    /// Thousands of members forged with scores in the future, more than the roster holds,
    /// change nothing a replica sees: each goes on counting the two that beat, beat after
    /// beat, while the forged members are removed a share per beat.
    @Test func forgedMembersScoredInTheFutureChangeNoReplicasCount() async throws {
        try await withFleet(2) { (fleet: Fleet, server: RedisServer) async throws in
            func counts() async throws -> [Double] {
                var counts: [Double] = []
                for replica in fleet.replicas {
                    counts.append(try await replica.metrics().value("amodb_proxy_replicas"))
                }
                return counts
            }
            try await withRedisClient(server.configuration()) { redis in
                let time = try #require(try await redis.send(["TIME"]).array)
                let now = try #require(time[0].string.flatMap(Int64.init)) * 1000
                // Far ahead, never expiring; and a minute ahead, which stays ahead for the
                // whole test (members that reach now are indistinguishable from live ones).
                var forged: [RedisValue] = ["ZADD", "amodb-proxy:replicas"]
                for index in 0..<2_500 { forged += [.integer(9_000_000_000_000_000), .bulk("far-\(index)")] }
                for index in 0..<2_500 { forged += [.integer(now + 60_000), .bulk("minute-\(index)")] }
                _ = try await redis.send(forged)
            }
            // Each replica beats every second: four seconds of its sightings span several beats
            // of both, the first ones after the forgery included.
            var seen: [[Double]] = []
            let end = ContinuousClock.now + .seconds(4)
            while ContinuousClock.now < end {
                seen.append(try await counts())
                try await Task.sleep(for: .milliseconds(250))
            }
            #expect(seen.allSatisfy { $0 == [2, 2] }, "\(seen)")
        }
    }
}
