import AmodbProxy
import AmodbRedis
import AmodbRedisTestSupport
import AmodbTestSupport
import Testing

/// One budget for the fleet: the key's limit holds however many replicas spend it.
@Suite(
    .enabled(if: RedisServer.isInstalled, Comment(rawValue: RedisServer.notInstalledMessage)), .timeLimit(.minutes(1)))
struct FleetBudgetTests {
    @Test(arguments: RedisTransport.available)
    func aLimitOfTenAcrossTwoReplicasAllowsAtMostTenCalls(_ transport: RedisTransport) async throws {
        try await withFleet(2, transport: transport, adjust: { $0.rateLimit = 10 }) {
            (fleet: Fleet, _: RedisServer) async throws in
            var statuses: [Int] = []
            for id in 1...30 {
                statuses.append(try await fleet[id % 2].get("/3/movie/\(id)").status)
            }
            #expect(fleet.upstream.calls.count <= 10)
            #expect(fleet.upstream.calls.count >= 7)  // the window's calls for misses were spent, by both
            #expect(statuses.allSatisfy { $0 == 200 || $0 == 503 })
            #expect(statuses.filter { $0 == 503 }.count == 30 - fleet.upstream.calls.count)
        }
    }

    @Test(arguments: ["FLUSHALL", "a restart without persistence"])
    func theWindowOutlivesRedisLosingItsData(_ loss: String) async throws {
        try await withFleet(
            2,
            adjust: {
                $0.rateLimit = 10
                $0.missWait = 0.2
            }
        ) { (fleet: Fleet, server: RedisServer) async throws in
            #expect(await fleet.seeEachOther())
            for id in 1...10 {
                #expect(try await fleet[id % 2].get("/3/movie/\(id)").status == 200)
            }
            #expect(fleet.upstream.calls.count == 10)
            if loss == "FLUSHALL" {
                try await withRedisClient(server.configuration()) { redis in _ = try await redis.send(["FLUSHALL"]) }
            } else {
                try await server.restart()
            }
            // amodb still counts the ten calls of the last minute: the replicas remember a
            // window, so the one they find missing was lost, and grants nothing for a window.
            var refusals: [String] = []
            for id in 11...24 {
                let refused = try await fleet[id % 2].get("/3/movie/\(id)")
                #expect(refused.status == 503)
                refusals.append(refused.header("Cache-Status") ?? "")
                #expect(refused.text.contains("Calls to amodb are paused"), "\(refused.text)")
                try await Task.sleep(for: .milliseconds(250))
            }
            #expect(fleet.upstream.calls.count == 10)
            // Lost, or (right after a restart, before a replica's link is up again) unreachable:
            // either way, nothing from the fleet's window.
            #expect(refusals.contains("amodb-proxy; fwd=miss; detail=budget-lost"), "\(refusals)")
            #expect(
                refusals.allSatisfy {
                    $0 == "amodb-proxy; fwd=miss; detail=budget-lost"
                        || $0 == "amodb-proxy; fwd=miss; detail=redis-unreachable"
                }, "\(refusals)")
            #expect(await fleet.allSeeEachOther(settled: false))
            #expect(fleet.logs.contains { $0.all.contains { $0.contains("the fleet's budget in Redis was lost") } })
        }
    }

    @Test func a429SeenByOneReplicaHoldsBackTheOthers() async throws {
        let upstream = ScriptedUpstream(
            fallback: .response(UpstreamResponse(status: 200, body: Array(ScriptedUpstream.movieDetails.utf8))))
        // Longer than the proxy waits out (30 s): passed on at once, and the window stays closed.
        upstream.enqueue(.response(UpstreamResponse(status: 429, headers: ["retry-after": "45"])))
        try await withFleet(2, upstream: upstream) { (fleet: Fleet, _: RedisServer) async throws in
            let limited = try await fleet[0].get("/3/movie/1")
            #expect(limited.status == 503 || limited.status == 429)
            let other = try await fleet[1].get("/3/movie/2")
            #expect(other.status == 503)
            #expect(other.header("Cache-Status") == "amodb-proxy; fwd=miss; detail=budget-exhausted")
            #expect(upstream.calls == ["/movie/1"])
        }
    }

    @Test func amodbsLimitHeadersReadByOneReplicaBindTheOthers() async throws {
        let upstream = ScriptedUpstream(
            fallback: .response(UpstreamResponse(status: 200, body: Array(ScriptedUpstream.movieDetails.utf8))))
        upstream.enqueue(
            .response(
                UpstreamResponse(
                    status: 200,
                    headers: ["x-ratelimit-limit": "40", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "50"],
                    body: Array(ScriptedUpstream.movieDetails(id: 1).utf8))))
        try await withFleet(2, upstream: upstream) { (fleet: Fleet, _: RedisServer) async throws in
            #expect(try await fleet[0].get("/3/movie/1").status == 200)
            let other = try await fleet[1].get("/3/movie/2")
            #expect(other.status == 503)
            #expect(upstream.calls == ["/movie/1"])
        }
    }

    /// Two replicas with a limit of ten on the production timeouts (50 ms a command), and
    /// 60 cold paths in three bursts while Redis stalls: past the command timeout (a
    /// `BGSAVE` fork), then past a second (an outage). The first burst goes to one replica,
    /// which spends most of the window through Redis; a replica that then fell back to a
    /// share of its own would spend it again. amodb sees ten calls at most.
    @Test func aStallingRedisDoesNotSendTheFleetPastItsLimit() async throws {
        try await withRedisServer { server in
            let upstream = ScriptedUpstream(
                fallback: .response(UpstreamResponse(status: 200, body: Array(ScriptedUpstream.movieDetails.utf8))))
            let fleet = try Fleet(2, redis: RedisConfiguration(endpoint: server.endpoint), upstream: upstream) {
                $0.rateLimit = 10
                $0.fleetSize = 2
            }
            try await withServer(fleet) { (fleet: Fleet) async throws in
                #expect(await fleet.seeEachOther())
                let burst: @Sendable (ClosedRange<Int>, Int?) async throws -> [Int] = { ids, only in
                    try await withThrowingTaskGroup(of: Int.self) { group in
                        for id in ids {
                            group.addTask { try await fleet[only ?? id % 2].get("/3/movie/\(id)").status }
                        }
                        return try await group.reduce(into: []) { $0.append($1) }
                    }
                }
                var statuses = try await burst(1...8, 1)
                server.pause()
                let first = Task { try await burst(9...24, 0) }
                try await Task.sleep(for: .milliseconds(300))
                server.resume()
                statuses += try await first.value
                server.pause()
                let second = Task { try await burst(25...44, nil) }
                try await Task.sleep(for: .milliseconds(2_500))
                server.resume()
                statuses += try await second.value
                statuses += try await burst(45...60, nil)
                #expect(upstream.calls.count <= 10, "amodb saw \(upstream.calls.count) calls in one window")
                #expect(upstream.calls.count >= 8)
                #expect(statuses.count == 60 && statuses.allSatisfy { $0 == 200 || $0 == 503 })
            }
        }
    }
}
