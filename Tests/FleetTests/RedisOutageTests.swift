import AmodbRedis
import AmodbRedisTestSupport
import AmodbTestSupport
import Testing

@testable import AmodbProxy

/// Redis is an optimisation, and the key's limit a promise: while Redis is away a replica
/// serves what it stores and spends only its outage reserve (`AMODB_BUDGET_RESERVE` divided
/// among `AMODB_FLEET_SIZE` replicas), from the first miss on: never the fleet's window,
/// which the others may have spent; with no reserve it calls nothing and says why. When Redis
/// returns, sharing resumes.
@Suite(
    .enabled(if: RedisServer.isInstalled, Comment(rawValue: RedisServer.notInstalledMessage)), .timeLimit(.minutes(1)))
struct RedisOutageTests {
    static let movie = ScriptedUpstream.Answer.response(
        UpstreamResponse(status: 200, body: Array(ScriptedUpstream.movieDetails.utf8)))

    @Test func withRedisStoppedAReplicaSpendsOnlyItsReserveFromTheFirstMiss() async throws {
        let clock = ManualClock()
        let adjust: (inout ProxyConfiguration) -> Void = {
            $0.rateLimit = 20
            $0.fleetSize = 2
            $0.budgetReserve = 4  // two calls a minute each
            $0.missWait = 0
        }
        try await withFleet(2, clock: clock, adjust: adjust) { (fleet: Fleet, server: RedisServer) async throws in
            #expect(try await fleet[0].get("/3/movie/550").status == 200)
            await server.stop()
            // Served from memory, Redis untouched.
            let hit = try await fleet[0].get("/3/movie/550")
            #expect(hit.status == 200)
            #expect(hit.header("Cache-Status")?.hasPrefix("amodb-proxy; hit") == true)
            // Misses from the first second on: the reserve's two calls, then nothing.
            let before = fleet.upstream.calls.count
            #expect(try await fleet[0].get("/3/movie/1").status == 200)
            #expect(try await fleet[0].get("/3/movie/2").status == 200)
            for id in 3...5 {
                let refused = try await fleet[0].get("/3/movie/\(id)")
                #expect(refused.status == 503)
                #expect(refused.header("Cache-Status") == "amodb-proxy; fwd=miss; detail=redis-unreachable")
                #expect(refused.text.contains("Calls to amodb are paused: Redis is unreachable"))
                #expect(refused.header("Retry-After") != nil)
            }
            #expect(fleet.upstream.calls.count - before == 2, "the reserve only")
            // The reserve frees as its own calls leave its window, whatever Redis does.
            clock.advance(by: 61)
            #expect(try await fleet[0].get("/3/movie/6").status == 200)
            #expect(fleet.upstream.calls.count - before == 3)
            #expect(await eventually { fleet.logs[0].all.contains { $0.contains("redis unreachable") } })
            let ready = try await fleet[0].get("/readyz")
            #expect(ready.status == 200)
            #expect(ready.text.contains(#""budget":"paused: redis_unreachable"#), "\(ready.text)")
            let samples = try await fleet[0].metrics()
            #expect(try samples.value("amodb_proxy_redis_up") == 0)
            #expect(try samples.value("amodb_proxy_redis_outage") == 1)
            #expect(try samples.value("amodb_proxy_budget_paused", ["reason": "redis_unreachable"]) == 1)
            #expect(try samples.value("amodb_proxy_budget_misses_paused_total", ["reason": "redis_unreachable"]) >= 3)
            #expect(try samples.value("amodb_proxy_redis_errors_total") >= 1)
            #expect(fleet.logs[0].all.filter { $0.contains("redis unreachable") }.count == 1)
            let status = try await fleet[0].get("/status.json").text
            #expect(status.contains(#""paused":"redis_unreachable""#), "\(status)")
        }
    }

    /// A reserve of 8 on a 40-a-minute plan among 8 replicas: one call a minute each,
    /// from the first second of an outage, whether one replica's link or Redis is down.
    @Test func withAReserveOfEightAmongEightReplicasEachServesAMissFromTheFirstSecond() async throws {
        let adjust: (inout ProxyConfiguration) -> Void = {
            $0.rateLimit = 40
            $0.fleetSize = 8
            $0.budgetReserve = 8
            $0.missWait = 0
        }
        try await withRedisServer { server in
            let relay = try TCPRelay(to: server.port)
            let upstream = ScriptedUpstream(fallback: Self.movie)
            let fleet = try Fleet(
                8,
                redisOf: { index in
                    index == 0
                        ? RedisConfiguration(endpoint: .init(host: "127.0.0.1", port: relay.port))
                        : server.configuration()
                }, upstream: upstream, clockOf: { _ in SystemClock() }, adjust: adjust)
            try await withServer(fleet) { (fleet: Fleet) async throws in
                #expect(await fleet.seeEachOther())
                // One replica's own link cut: it serves a miss at once (no miss waits here:
                // `missWait` is 0, so a refusal would be a 503), from its reserve.
                relay.set(.refusing)
                #expect(try await fleet[0].get("/3/movie/1").status == 200)
                // Redis down for all: every replica serves a miss at once.
                await server.stop()
                for index in 1..<8 {
                    #expect(try await fleet[index].get("/3/movie/\(100 + index)").status == 200, "replica \(index)")
                }
                #expect(try await fleet[3].get("/3/movie/200").status == 503, "one call a minute each")
            }
            await relay.shutdown()
        }
    }

    /// A lone replica (`AMODB_FLEET_SIZE=1`) needs Redis for nothing in the budget: with
    /// Redis down, a miss is fetched at once, within the whole limit.
    @Test func aLoneReplicaWithRedisDownFetchesAMissAtOnce() async throws {
        let upstream = ScriptedUpstream(fallback: Self.movie)
        var configuration = ProxyHarness.configuration()
        configuration.redis = .init(endpoint: .init(host: "127.0.0.1", port: 1))  // nothing listens there
        configuration.fleetSize = 1
        configuration.rateLimit = 5
        configuration.missWait = 0
        configuration.clientUpstreamShare = 1
        try await withServer(try ProxyHarness(.live, configuration: configuration, fetcher: upstream)) {
            (proxy: ProxyHarness) async throws in
            var served = 0
            for id in 1...7 where try await proxy.get("/3/movie/\(id)").status == 200 { served += 1 }
            #expect(served == 5, "the whole limit, no reserve")
        }
    }

    @Test func withNoReserveACutOffReplicaCallsNothing() async throws {
        let adjust: (inout ProxyConfiguration) -> Void = {
            $0.rateLimit = 20
            $0.fleetSize = 2
            $0.budgetReserve = 0
            $0.missWait = 0
        }
        try await withFleet(2, adjust: adjust) { (fleet: Fleet, server: RedisServer) async throws in
            await server.stop()
            for id in 1...3 { #expect(try await fleet[1].get("/3/movie/\(id)").status == 503) }
            #expect(fleet.upstream.calls.isEmpty)
        }
    }

    @Test func afterARestartSharingResumes() async throws {
        try await withFleet(2) { (fleet: Fleet, server: RedisServer) async throws in
            #expect(await fleet.seeEachOther())
            await server.stop()
            #expect(await eventually { fleet.logs[1].all.contains { $0.contains("redis unreachable") } })
            try await server.restart()  // empty
            #expect(await fleet.seeEachOther(settled: false))
            // The window is lost (the replicas remember one): a minute of reserve only, which
            // serves this miss; the cache is shared again at once.
            #expect(try await eventually { try await fleet[0].get("/3/movie/77").status == 200 })
            #expect(try await fleet[1].get("/3/movie/77").status == 200)
            #expect(fleet.upstream.calls == ["/movie/77"])
            #expect(fleet.logs[1].all.filter { $0.contains("redis reachable again") }.count == 1)
            #expect(try await fleet[1].metrics().value("amodb_proxy_redis_outage") == 0)
            #expect(
                try await fleet[1].metrics().value("amodb_proxy_budget_paused", ["reason": "budget_lost"]) == 1)
        }
    }

    @Test func aFrozenRedisCostsAMissItsWaitAndSpendsOnlyTheReserve() async throws {
        try await withRedisServer { server in
            let upstream = ScriptedUpstream(fallback: Self.movie)
            // The production timeouts: 50 ms per command, 250 ms to connect.
            try await withServer(
                try Fleet(1, redis: RedisConfiguration(endpoint: server.endpoint), upstream: upstream) {
                    $0.missWait = 1
                    $0.rateLimit = 20
                    $0.fleetSize = 2
                    $0.budgetReserve = 2  // one call a minute each
                }
            ) { (fleet: Fleet) async throws in
                #expect(await fleet.seeEachOther())
                #expect(try await fleet[0].get("/3/movie/550").status == 200)
                server.pause()  // accepts connections, answers nothing
                defer { server.resume() }
                #expect(
                    try await fleet[0].get("/3/movie/550").header("Cache-Status")?.hasPrefix("amodb-proxy; hit") == true
                )
                #expect(try await fleet[0].get("/3/movie/1").status == 200, "the reserve's call, at once")
                for id in 2...4 {
                    let started = ContinuousClock.now
                    let miss = try await fleet[0].get("/3/movie/\(id)")
                    #expect(miss.status == 503)
                    #expect(miss.header("Retry-After") != nil)
                    #expect(ContinuousClock.now - started < .seconds(3), "a frozen Redis must not hold a miss")
                }
                #expect(upstream.calls == ["/movie/550", "/movie/1"], "nothing from the fleet's window")
                #expect(try await fleet[0].get("/readyz").status == 200)
                #expect(await eventually { (try? await fleet[0].metrics().value("amodb_proxy_redis_up")) == 0 })
            }
        }
    }

    @Test func aMissWaitsOutABriefStall() async throws {
        try await withRedisServer { server in
            let upstream = ScriptedUpstream(fallback: Self.movie)
            try await withServer(
                try Fleet(1, redis: RedisConfiguration(endpoint: server.endpoint), upstream: upstream) {
                    $0.missWait = 3
                    $0.budgetReserve = 0  // the call can only come from the fleet's window
                }
            ) { (fleet: Fleet) async throws in
                #expect(await fleet.seeEachOther())
                #expect(try await fleet[0].get("/3/movie/550").status == 200)
                server.pause()
                let miss = Task { try await fleet[0].get("/3/movie/551") }
                try await Task.sleep(for: .milliseconds(300))  // a fork for BGSAVE stalls this long
                server.resume()
                #expect(try await miss.value.status == 200, "the miss waited in line and Redis granted its call")
                #expect(upstream.calls == ["/movie/550", "/movie/551"])
            }
        }
    }

    /// One slow command is no outage: failures make one only when there are several and they
    /// span a second of the replica's clock (or no first reply came within a second).
    @Test func anOutageIsSeveralFailuresOverASecondNotOneSlowCommand() async throws {
        let clock = ManualClock()
        let log = LogCapture()
        // Nothing listens there: every call fails at once.
        let link = RedisLink(
            configuration: RedisConfiguration(endpoint: .init(host: "127.0.0.1", port: 1)), prefix: "amodb-proxy:",
            logger: ProxyLogger(minimumLevel: .info, secrets: [], sink: log.sink), largestBody: 1024, clock: clock)
        try await withRedisLink(link) { link in
            let fail: () async -> Void = { _ = await link.call { try await $0.send(["PING"]) } }
            clock.advance(by: 0.5)
            for _ in 0..<5 { await fail() }
            #expect(link.outageStart() == nil, "five failures within half a second of the start")
            clock.advance(by: 0.4)
            await fail()
            #expect(link.outageStart() == nil, "a second has not passed since the first failure")
            clock.advance(by: 0.7)
            #expect(link.outageStart() == clock.now(), "failures spanning a second: an outage, from now")
            #expect(log.all.filter { $0.contains("redis unreachable") }.count == 1)
            clock.advance(by: 5)
            await fail()
            #expect(link.outageStart() == clock.now() - 5, "the outage keeps its start")
        }
    }

    @Test func aReplicaStartingWithRedisUnreachableSpendsOnlyItsReserve() async throws {
        let upstream = ScriptedUpstream(fallback: Self.movie)
        let clock = ManualClock()
        var configuration = ProxyHarness.configuration()
        configuration.redis = .init(endpoint: .init(host: "127.0.0.1", port: 1))  // nothing listens there
        configuration.clientUpstreamShare = 1
        configuration.rateLimit = 20
        configuration.fleetSize = 4
        configuration.budgetReserve = 8
        configuration.missWait = 0
        try await withServer(try ProxyHarness(.live, configuration: configuration, fetcher: upstream, clock: clock)) {
            (proxy: ProxyHarness) async throws in
            var served = 0
            for id in 1...10 where try await proxy.get("/3/movie/\(id)").status == 200 { served += 1 }
            #expect(served == 2, "8 a minute kept among the 4 replicas of AMODB_FLEET_SIZE: 2 each")
            clock.advance(by: 61)
            #expect(try await proxy.get("/3/movie/11").status == 200)
            #expect(upstream.calls.count == 3)
            #expect(try await proxy.get("/readyz").status == 200)
        }
    }
}
