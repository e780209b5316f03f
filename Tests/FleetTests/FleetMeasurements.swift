import AmodbProxy
import AmodbRedis
import AmodbRedisTestSupport
import AmodbTestSupport
import Foundation
import Testing

// The fleet's figures, printed as `MEASURE` lines: a measurement, not a test. It is
// compiled with the FleetTests target (it uses that target's `Fleet` and `withFleet`), so it
// cannot rot, and skipped unless AMODB_FLEET_MEASURE=1: `swift test` never runs it. Run it with
//
//     bash Tests/Perf/fleet-measurements.sh [test name]   (all: a few minutes; needs redis-server)

/// The fleet's figures under a herd, a cold flood, a Redis restart, a lost window, a failing
/// amodb, one client's made-up ids and a crowded Redis.
@Suite(
    .enabled(if: RedisServer.isInstalled && ProcessInfo.processInfo.environment["AMODB_FLEET_MEASURE"] == "1"),
    .serialized, .timeLimit(.minutes(3)))
struct FleetMeasurements {
    @Test func upstreamCallsForAHerdSpreadOverThreeReplicas() async throws {
        let upstream = ScriptedUpstream(fallback: .status(200, ScriptedUpstream.movieDetails))
        upstream.setDelay(milliseconds: 50)  // amodb's latency, roughly
        try await withFleet(3, upstream: upstream) { (fleet: Fleet, _: RedisServer) async throws in
            #expect(await fleet.seeEachOther())
            var calls: [Int] = []
            for round in 0..<5 {
                let before = upstream.calls.count
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for index in 0..<80 {
                        let replica = fleet[index % 3]
                        group.addTask { try await replica.get("/3/movie/\(1000 + round)").status }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses.allSatisfy { $0 == 200 })
                calls.append(upstream.calls.count - before)
            }
            print(
                "MEASURE herd: 80 concurrent requests over 3 replicas, 5 cold paths: upstream calls per path \(calls)")
            #expect(calls.allSatisfy { $0 == 1 })
        }
    }

    @Test func theFleetsCallsPerMinuteUnderAColdFlood() async throws {
        let upstream = ScriptedUpstream(fallback: .status(200, ScriptedUpstream.movieDetails))
        upstream.setDelay(milliseconds: 20)
        try await withFleet(3, upstream: upstream, adjust: { $0.rateLimit = 40 }) {
            (fleet: Fleet, _: RedisServer) async throws in
            #expect(await fleet.seeEachOther())
            let started = ContinuousClock.now
            let counter = Counter()
            var atOneMinute = 0
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<12 {
                    group.addTask {
                        var id = worker * 1_000_000
                        while ContinuousClock.now - started < .seconds(70) {
                            id += 1
                            let status = try await fleet[id % 3].get("/3/movie/\(id)").status
                            counter.add(status)
                        }
                    }
                }
                try await Task.sleep(for: .seconds(60))
                atOneMinute = upstream.calls.count
                try await group.waitForAll()
            }
            let perReplica = fleet.replicas.map { $0.proxy.statistics.value(.upstreamCall) }
            print(
                "MEASURE cold flood: 70 s, 12 clients over 3 replicas, AMODB_RATE_LIMIT=40: \(counter.summary), upstream calls \(atOneMinute) in the first 60 s, \(upstream.calls.count) in 70 s (by replica \(perReplica))"
            )
            #expect(atOneMinute <= 40)
        }
    }

    @Test func behaviourThroughARedisRestart() async throws {
        let upstream = ScriptedUpstream(fallback: .status(200, ScriptedUpstream.movieDetails))
        try await withFleet(2, upstream: upstream) { (fleet: Fleet, server: RedisServer) async throws in
            #expect(await fleet.seeEachOther())
            for id in 1...20 { _ = try await fleet[id % 2].get("/3/movie/\(id)") }
            let counter = Counter()
            let stop = Counter()
            let load = Task {
                var index = 0
                while stop.total == 0 {
                    index += 1
                    let status = (try? await fleet[index % 2].get("/3/movie/\(index % 20 + 1)").status) ?? 0
                    counter.add(status)
                }
            }
            try await Task.sleep(for: .milliseconds(500))
            await server.stop()
            let stopped = ContinuousClock.now
            #expect(await eventually { (try? await fleet[0].metrics().value("amodb_proxy_redis_up")) == 0 })
            let noticed = ContinuousClock.now - stopped
            try await Task.sleep(for: .seconds(2))
            try await server.restart()
            let restarted = ContinuousClock.now
            #expect(await fleet.seeEachOther())
            let resumed = ContinuousClock.now - restarted
            stop.add(1)
            await load.value
            let before = upstream.calls.count
            _ = try await fleet[0].get("/3/movie/4242")
            _ = try await fleet[1].get("/3/movie/4242")
            print(
                "MEASURE redis restart: outage noticed after \(noticed), sharing resumed \(resumed) after the restart; requests during: \(counter.summary); a fill after it: \(upstream.calls.count - before) upstream call for 2 replicas"
            )
            #expect(counter.failures == 0)
        }
    }

    @Test func callsAfterRedisLosesTheWindow() async throws {
        for loss in ["FLUSHALL", "restart"] {
            try await withFleet(2, adjust: { $0.rateLimit = 10 }) { (fleet: Fleet, server: RedisServer) async throws in
                #expect(await fleet.seeEachOther())
                for id in 1...10 { _ = try await fleet[id % 2].get("/3/movie/\(id)") }
                let spent = fleet.upstream.calls.count
                if loss == "FLUSHALL" {
                    try await withRedisClient(server.configuration()) { redis in _ = try await redis.send(["FLUSHALL"])
                    }
                } else {
                    try await server.restart()
                }
                let started = ContinuousClock.now
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for worker in 0..<4 {
                        group.addTask {
                            var id = 100 + worker * 1_000
                            while ContinuousClock.now - started < .seconds(3) {
                                id += 1
                                _ = try await fleet[id % 2].get("/3/movie/\(id)")
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                print(
                    "MEASURE window after \(loss): AMODB_RATE_LIMIT=10, \(spent) calls spent, then \(fleet.upstream.calls.count - spent) more within 3 s (4 clients over 2 replicas)"
                )
            }
        }
    }

    @Test func aFailingHerdOverThreeReplicas() async throws {
        // amodb hangs: the fetcher gives up after AMODB_UPSTREAM_TIMEOUT=3; one client per replica.
        let hung = ScriptedUpstream(fallback: .failure(.timedOut))
        hung.setDelay(milliseconds: 3_000)
        try await withFleet(3, upstream: hung, adjust: { $0.upstreamTimeout = 3 }) {
            (fleet: Fleet, _: RedisServer) async throws in
            #expect(await fleet.seeEachOther())
            let started = ContinuousClock.now
            let answers = try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<3 {
                    group.addTask {
                        let status = try await fleet[index].get("/3/movie/550").status
                        let seconds = (ContinuousClock.now - started) / .milliseconds(1) / 1000
                        return "\(status) after \((seconds * 10).rounded() / 10) s"
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }.sorted()
            }
            print(
                "MEASURE hung amodb, timeout 3 s, 3 replicas: upstream calls \(hung.calls.count); clients: \(answers.joined(separator: ", "))"
            )
        }
        // amodb answers 500 at once (50 ms on the wire); ten clients per replica at the same moment.
        let failing = ScriptedUpstream(fallback: .status(500, "{}"))
        failing.setDelay(milliseconds: 50)
        try await withFleet(3, upstream: failing) { (fleet: Fleet, _: RedisServer) async throws in
            #expect(await fleet.seeEachOther())
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<30 {
                    group.addTask { try await fleet[index % 3].get("/3/movie/551").status }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            print(
                "MEASURE amodb 500, 30 clients over 3 replicas: upstream calls \(failing.calls.count); statuses \(Set(statuses).sorted())"
            )
        }
    }

    @Test func callsCausedByOneClientsMadeUpIdsOverSixReplicas() async throws {
        let upstream = ScriptedUpstream(fallback: .status(404, "{}"))
        // 30 calls a minute, a sixth (5) for each client; clients told apart by a trusted X-Forwarded-For.
        try await withFleet(
            6, upstream: upstream,
            adjust: {
                $0.rateLimit = 30
                $0.clientUpstreamShare = 0.17
                $0.rateLimitExempt = []
                $0.trustedProxies = ["127.0.0.1"]
                $0.missWait = 0
            }
        ) { (fleet: Fleet, _: RedisServer) async throws in
            #expect(await fleet.seeEachOther())
            for id in 1...60 {
                _ = try await fleet[id % 6].get("/3/movie/\(900_000 + id)", headers: ["X-Forwarded-For": "203.0.113.7"])
            }
            let made = upstream.calls.count
            upstream.setFallback(.status(200, ScriptedUpstream.movieDetails))
            let other = try await fleet[0].get("/3/movie/550", headers: ["X-Forwarded-For": "198.51.100.2"])
            print(
                "MEASURE client share: 60 made-up ids from one client round-robin over 6 replicas, AMODB_RATE_LIMIT=30, AMODB_CLIENT_SHARE=0.17 (5 calls): \(made) upstream calls; another client's real miss then: \(other.status) \(other.header("Cache-Status") ?? "")"
            )
        }
    }

    @Test func replicaCountsAmongTwoMillionUnrelatedKeys() async throws {
        try await withRedisServer(arguments: ["--enable-debug-command", "yes"]) { server in
            try await withRedisClient(server.configuration(commandTimeout: .seconds(30))) { redis in
                _ = try await redis.send(["DEBUG", "POPULATE", 2_000_000, "unrelated"])
                _ = try await redis.send(["CONFIG", "RESETSTAT"])
                func cpu() async throws -> Double {
                    let info = try await redis.send(["INFO", "cpu"]).string ?? ""
                    return info.split(whereSeparator: \.isNewline).reduce(0.0) { total, line in
                        let parts = line.split(separator: ":")
                        guard parts.count == 2, parts[0] == "used_cpu_sys" || parts[0] == "used_cpu_user" else {
                            return total
                        }
                        return total + (Double(parts[1]) ?? 0)
                    }
                }
                let upstream = ScriptedUpstream(fallback: .status(200, ScriptedUpstream.movieDetails))
                try await withServer(try Fleet(4, redis: server.configuration(), upstream: upstream)) {
                    (fleet: Fleet) async throws in
                    let cpuBefore = try await cpu()
                    var seen: [[Int]] = Array(repeating: [], count: 4)
                    let started = ContinuousClock.now
                    while ContinuousClock.now - started < .seconds(10) {
                        for (index, replica) in fleet.replicas.enumerated() {
                            seen[index].append(Int((try? await replica.metrics().value("amodb_proxy_replicas")) ?? 0))
                        }
                        try await Task.sleep(for: .milliseconds(500))
                    }
                    let cpuSeconds = try await cpu() - cpuBefore
                    let stats = (try await redis.send(["INFO", "commandstats"]).string ?? "")
                        .split(whereSeparator: \.isNewline).filter { $0.hasPrefix("cmdstat_") }.map {
                            $0.prefix { $0 != "," }
                        }
                    let last = seen.map { $0.last ?? 0 }
                    print(
                        "MEASURE roster: 2,000,000 unrelated keys, 4 replicas, 10 s: redis CPU \(cpuSeconds) s (\(Int(cpuSeconds * 10)) %); replica counts (last) \(last), lowest \(seen.map { $0.dropFirst(4).min() ?? 0 }); \(stats.joined(separator: " "))"
                    )
                }
            }
        }
    }
}

/// Statuses seen, by value.
private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var statuses: [Int: Int] = [:]

    func add(_ status: Int) { lock.withLock { statuses[status, default: 0] += 1 } }
    var total: Int { lock.withLock { statuses.values.reduce(0, +) } }
    /// Anything but 200 and a budget's 503.
    var failures: Int { lock.withLock { statuses.filter { $0.key != 200 && $0.key != 503 }.values.reduce(0, +) } }
    var summary: String {
        lock.withLock { statuses.sorted { $0.key < $1.key }.map { "\($0.key)×\($0.value)" }.joined(separator: " ") }
    }
}
