import AmodbModels
import AmodbProxy
import AmodbRedis
import AmodbRedisTestSupport
import AmodbTestSupport
import Foundation
import Testing

/// The key's limit when the budget's state is lost or seen by only some replicas: one
/// replica cut off from Redis while the others are not, Redis frozen for longer than a
/// window, restarted from an older snapshot, a key evicted or deleted, a replica's clock set
/// ahead. Each is counted as amodb counts: the busiest sliding 60 s window of the calls the
/// shared upstream received, which must hold at most the limit.
@Suite(
    .enabled(if: RedisServer.isInstalled, Comment(rawValue: RedisServer.notInstalledMessage)), .timeLimit(.minutes(3)))
struct BudgetStateLossTests {
    static let limit = 10

    static func configure(_ configuration: inout ProxyConfiguration) {
        configuration.rateLimit = limit
        configuration.fleetSize = 2
        configuration.missWait = 0.5
        configuration.budgetReserve = 2  // one call a minute for each replica on its own
    }

    /// One replica's own link to Redis stalls, the other's works: the cut-off one spends only
    /// its reserve, for as long as it lasts, and the other the fleet's window less the reserve.
    @Test func aReplicaCutOffFromRedisWhileTheOtherIsNotStaysWithinTheLimit() async throws {
        try await withRedisServer { server in
            let relay = try TCPRelay(to: server.port)
            let upstream = ScriptedUpstream(fallback: Self.movie)
            let fleet = try Fleet(
                2,
                redisOf: { index in
                    index == 0
                        ? RedisConfiguration(endpoint: .init(host: "127.0.0.1", port: relay.port))
                        : server.configuration()
                }, upstream: upstream, clockOf: { _ in SystemClock() }, adjust: Self.configure)
            try await withServer(fleet) { fleet in
                #expect(await fleet.seeEachOther())
                let traffic = ColdTraffic(fleet)
                try await traffic.run(for: .seconds(3))
                relay.set(.stalled)
                // Past a window and a call's time (72 s): a cut-off replica that then spent a
                // part of the limit of its own while the other still spent the whole window
                // would pass the limit here.
                try await traffic.run(for: .seconds(80))
                relay.set(.open)
                Self.expectWithinTheLimit(upstream, "one replica cut off")
                #expect(traffic.refusals.contains("amodb-proxy; fwd=miss; detail=redis-unreachable"))
            }
            await relay.shutdown()
        }
    }

    /// Redis frozen longer than a window; when it returns one replica bursts at once, before
    /// the other has heard from Redis again.
    @Test func redisFrozenPastAWindowThenABurstStaysWithinTheLimit() async throws {
        try await withFleet(2, upstream: ScriptedUpstream(fallback: Self.movie), adjust: Self.configure) {
            (fleet: Fleet, server: RedisServer) async throws in
            let traffic = ColdTraffic(fleet)
            try await traffic.run(for: .seconds(2))
            server.pause()
            try await traffic.run(for: .seconds(78))
            server.resume()
            try await traffic.burst(on: 1, count: 20)
            try await traffic.run(for: .seconds(5))
            Self.expectWithinTheLimit(fleet.upstream, "Redis frozen for 78 s")
        }
    }

    /// Redis restarted from an RDB saved before the last calls: the window's name survives,
    /// its recent calls do not. The state was written by another Redis process: lost.
    @Test func redisRestartedFromAnOlderSnapshotStaysWithinTheLimit() async throws {
        try await withFleet(2, upstream: ScriptedUpstream(fallback: Self.movie), adjust: Self.configure) {
            (fleet: Fleet, server: RedisServer) async throws in
            let traffic = ColdTraffic(fleet)
            try await traffic.burst(on: 0, count: 3)
            try await withRedisClient(server.configuration()) { redis in _ = try await redis.send(["SAVE"]) }
            try await traffic.burst(on: 1, count: 5)
            await server.stop()
            try await server.restart()  // loads the dump.rdb SAVE wrote: three calls, not eight
            #expect(await fleet.seeEachOther(settled: false))
            try await traffic.burst(on: 0, count: 10)
            try await traffic.burst(on: 1, count: 10)
            Self.expectWithinTheLimit(fleet.upstream, "an older snapshot")
            #expect(traffic.refusals.contains("amodb-proxy; fwd=miss; detail=budget-lost"), "\(traffic.refusals)")
        }
    }

    /// Only the calls key lost: deleted, or evicted by `allkeys-lru` under `maxmemory`.
    @Test(arguments: ["DEL", "eviction"])
    func theCallsKeyLostAloneStaysWithinTheLimit(_ how: String) async throws {
        let arguments = how == "eviction" ? ["--maxmemory", "3mb", "--maxmemory-policy", "allkeys-lru"] : []
        try await withRedisServer(arguments: arguments) { server in
            let upstream = ScriptedUpstream(fallback: Self.movie)
            try await withServer(
                try Fleet(2, redis: server.configuration(), upstream: upstream, adjust: Self.configure)
            ) { fleet in
                #expect(await fleet.seeEachOther())
                let traffic = ColdTraffic(fleet)
                try await traffic.burst(on: 0, count: 8)
                try await withRedisClient(server.configuration()) { redis in
                    if how == "DEL" {
                        _ = try await redis.send(["DEL", "amodb-proxy:budget:calls"])
                    } else {
                        // Filler until the budget's calls are evicted.
                        let filler = String(repeating: "x", count: 4_000)
                        var index = 0
                        while try await redis.send(["EXISTS", "amodb-proxy:budget:calls"]).integer == 1, index < 20_000
                        {
                            _ = try? await redis.send(["SET", .bulk("filler:\(index)"), .bulk(filler)])
                            index += 1
                        }
                        #expect(try await redis.send(["EXISTS", "amodb-proxy:budget:calls"]).integer == 0)
                    }
                }
                try await traffic.burst(on: 1, count: 10)
                try await traffic.burst(on: 0, count: 10)
                Self.expectWithinTheLimit(upstream, "the calls key lost (\(how))")
                if how == "eviction" {
                    #expect(
                        fleet.logs[0].all.contains { $0.contains("maxmemory-policy") && $0.contains("allkeys-lru") },
                        "a policy that may evict the budget's keys is warned of")
                    #expect(try await fleet[0].get("/readyz").text.contains("allkeys-lru"))
                }
            }
        }
    }

    /// A replica whose clock runs three minutes ahead: the window is judged by Redis's clock,
    /// so it cannot trim the other's calls out of it.
    @Test func aReplicaWhoseClockRunsAheadStaysWithinTheLimit() async throws {
        try await withRedisServer { server in
            let upstream = ScriptedUpstream(fallback: Self.movie)
            let fleet = try Fleet(
                2, redisOf: { _ in server.configuration() }, upstream: upstream,
                clockOf: { index -> any ProxyClock in index == 1 ? OffsetClock(seconds: 180) : SystemClock() },
                adjust: Self.configure)
            try await withServer(fleet) { fleet in
                #expect(await fleet.seeEachOther())
                let traffic = ColdTraffic(fleet)
                try await traffic.burst(on: 0, count: 10)
                try await traffic.burst(on: 1, count: 10)
                try await traffic.burst(on: 0, count: 5)
                Self.expectWithinTheLimit(upstream, "a clock three minutes ahead")
                #expect(upstream.calls.count >= Self.limit - 2, "the window was spent, not refused outright")
            }
        }
    }

    static let movie = ScriptedUpstream.Answer.response(
        UpstreamResponse(status: 200, body: Array(ScriptedUpstream.movieDetails.utf8)))

    static func expectWithinTheLimit(
        _ upstream: ScriptedUpstream, _ what: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let busiest = BusiestWindow(of: upstream.callInstants, length: .seconds(60))?.count ?? 0
        print("BudgetStateLossTests: \(what): \(upstream.calls.count) calls, busiest 60 s window \(busiest)")
        #expect(busiest <= limit, "\(what): \(busiest) calls in one 60 s window", sourceLocation: sourceLocation)
    }
}

/// A clock `seconds` ahead of the system's.
struct OffsetClock: ProxyClock {
    let seconds: Double

    func now() -> Double { SystemClock().now() + seconds }
}

/// Cold paths (each asked once) to a fleet's replicas, and what was refused.
final class ColdTraffic: @unchecked Sendable {
    private let fleet: Fleet
    private var next = 1
    /// The `Cache-Status` of each refusal, as seen.
    private(set) var refusals: Set<String> = []

    init(_ fleet: Fleet) { self.fleet = fleet }

    /// A new path to each replica in turn, every 250 ms, for `duration`.
    func run(for duration: Duration) async throws {
        let end = ContinuousClock.now + duration
        while ContinuousClock.now < end {
            for replica in fleet.replicas.indices { try await ask(replica) }
            try await Task.sleep(for: .milliseconds(250))
        }
    }

    /// `count` new paths to replica `replica`, one after another.
    func burst(on replica: Int, count: Int) async throws {
        for _ in 0..<count { try await ask(replica) }
    }

    private func ask(_ replica: Int) async throws {
        next += 1
        let response = try await fleet[replica].get("/3/movie/\(next)")
        if response.status != 200 { refusals.insert(response.header("Cache-Status") ?? "status \(response.status)") }
    }
}
