import AmodbProxy
import AmodbRedis
import AmodbRedisTestSupport
import AmodbTestSupport
import Testing

/// Redis is an optimisation: while it is down every replica serves from memory and
/// fetches within its fair share; when it returns, sharing resumes.
@Suite(
    .enabled(if: RedisServer.isInstalled, Comment(rawValue: RedisServer.notInstalledMessage)), .timeLimit(.minutes(1)))
struct RedisOutageTests {
    @Test func withRedisStoppedEachReplicaServesFromMemoryAndFetchesWithinItsShare() async throws {
        try await withFleet(2, adjust: { $0.rateLimit = 20 }) { (fleet: Fleet, server: RedisServer) async throws in
            #expect(await eventually { await fleet.allSeeEachOther() })
            #expect(try await fleet[0].get("/3/movie/550").status == 200)
            await server.stop()
            // Served from memory, Redis untouched.
            let hit = try await fleet[0].get("/3/movie/550")
            #expect(hit.status == 200)
            #expect(hit.header("Cache-Status")?.hasPrefix("amodb-proxy; hit") == true)
            let before = fleet.upstream.calls.count
            var statuses: [Int] = []
            for id in 1...20 { statuses.append(try await fleet[0].get("/3/movie/\(id)").status) }
            let made = fleet.upstream.calls.count - before
            // Its share: 20 / 2 replicas = 10 a minute, a quarter of it kept for refreshes.
            #expect(made >= 1 && made <= 10)
            #expect(statuses.allSatisfy { $0 == 200 || $0 == 503 })
            #expect(statuses.filter { $0 == 200 }.count == made)
            #expect(try await fleet[0].get("/readyz").status == 200)
            let samples = try await fleet[0].metrics()
            #expect(try samples.value("amodb_proxy_redis_up") == 0)
            #expect(try samples.value("amodb_proxy_redis_errors_total") >= 1)
            #expect(try samples.value("amodb_proxy_redis_call_duration_seconds_count") >= 1)
            #expect(fleet.logs[0].all.filter { $0.contains("redis unreachable") }.count == 1)
        }
    }

    @Test func afterARestartSharingResumes() async throws {
        try await withFleet(2) { (fleet: Fleet, server: RedisServer) async throws in
            #expect(await eventually { await fleet.allSeeEachOther() })
            await server.stop()
            #expect(await eventually { (try? await fleet[1].metrics().value("amodb_proxy_redis_up")) == 0 })
            try await server.restart()  // empty
            #expect(await eventually { await fleet.allSeeEachOther() })
            #expect(try await fleet[0].get("/3/movie/77").status == 200)
            #expect(try await fleet[1].get("/3/movie/77").status == 200)
            #expect(fleet.upstream.calls == ["/movie/77"])
            #expect(fleet.logs[1].all.filter { $0.contains("redis reachable again") }.count == 1)
        }
    }

    @Test func aFrozenRedisCostsAMissTensOfMillisecondsNotAnError() async throws {
        try await withRedisServer { server in
            let upstream = ScriptedUpstream(
                fallback: .response(UpstreamResponse(status: 200, body: Array(ScriptedUpstream.movieDetails.utf8))))
            // The production timeouts: 50 ms per command, 250 ms to connect.
            try await withServer(try Fleet(1, redis: RedisConfiguration(endpoint: server.endpoint), upstream: upstream))
            { (fleet: Fleet) async throws in
                #expect(try await fleet[0].get("/3/movie/550").status == 200)
                server.pause()  // accepts connections, answers nothing
                defer { server.resume() }
                #expect(
                    try await fleet[0].get("/3/movie/550").header("Cache-Status")?.hasPrefix("amodb-proxy; hit") == true
                )
                for id in 1...3 {
                    let started = ContinuousClock.now
                    let miss = try await fleet[0].get("/3/movie/\(id)")
                    #expect(miss.status == 200)
                    #expect(ContinuousClock.now - started < .seconds(3), "a frozen Redis must not hold a miss")
                }
                #expect(try await fleet[0].get("/readyz").status == 200)
                #expect(await eventually { (try? await fleet[0].metrics().value("amodb_proxy_redis_up")) == 0 })
            }
        }
    }

    @Test func aReplicaStartsAndServesWithRedisUnreachable() async throws {
        let upstream = ScriptedUpstream(
            fallback: .response(UpstreamResponse(status: 200, body: Array(ScriptedUpstream.movieDetails.utf8))))
        var configuration = ProxyHarness.configuration()
        configuration.redis = .init(endpoint: .init(host: "127.0.0.1", port: 1))  // nothing listens there
        configuration.clientUpstreamShare = 1
        try await withServer(try ProxyHarness(configuration: configuration, fetcher: upstream)) {
            (proxy: ProxyHarness) async throws in
            #expect(try await proxy.get("/3/movie/550").status == 200)
            #expect(try await proxy.get("/3/movie/550").status == 200)
            #expect(upstream.calls == ["/movie/550"])
            #expect(try await proxy.get("/readyz").status == 200)
        }
    }
}
