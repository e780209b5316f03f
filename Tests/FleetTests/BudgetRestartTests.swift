import AmodbRedisTestSupport
import AmodbSandbox
import AmodbTestSupport
import Foundation
import Testing

/// Replicas that lose their memory: child processes of the built `amodb-proxy`, killed with
/// SIGKILL (or stopped with SIGTERM) and started again with the same state directory, as a
/// container restarted on its volume. amodb is the stand-in, which records every call it
/// receives; the busiest sliding 60 s window must hold at most the limit.
@Suite(.timeLimit(.minutes(3)))
struct BudgetRestartTests {
    static let limit = 10

    /// A lone replica, no Redis, bursting, killed, started again, bursting, stopped, started
    /// again, bursting, all within a minute: its ledger is the whole truth of what it spent.
    @Test func aLoneReplicaRestartedTwiceWithinAMinuteStaysWithinTheLimit() async throws {
        let amodb = try Self.startAmodb()
        try await withServer(amodb) { amodb in
            let states = StateDirectories(1)
            defer { states.remove() }
            var environment = Self.environment(amodb)
            environment["AMODB_FLEET_SIZE"] = "1"
            environment["AMODB_STATE_DIR"] = states[0]
            let replica = ProxyReplica(name: "replica", binary: try ProxyBinary(), environment: environment)
            try await withServer(replica) { replica in
                try await Self.start(replica)
                var next = 0
                next = try await Self.burst(replica, from: next, count: 12)
                await replica.kill()
                try await Self.start(replica)
                next = try await Self.burst(replica, from: next, count: 12)
                await replica.terminate()
                try await Self.start(replica)
                let refused = try await Self.get(replica, "/3/movie/\(9_000_000 + next)")
                #expect(refused.status == 503, "the window the earlier lives spent is spent")
                next = try await Self.burst(replica, from: next + 1, count: 12)
            }
            Self.expectWithinTheLimit(amodb, "a lone replica restarted twice")
        }
    }

    /// A replica bursts, is killed, and Redis is flushed within the same heartbeat: the other
    /// replica (and the killed one, started again on its ledger) remember the window, so the
    /// empty one they find is lost, and grants nothing for a window.
    @Test(.enabled(if: RedisServer.isInstalled, Comment(rawValue: RedisServer.notInstalledMessage)))
    func aReplicaKilledAfterABurstWithRedisFlushedStaysWithinTheLimit() async throws {
        let amodb = try Self.startAmodb()
        try await withServer(amodb) { amodb in
            try await withRedisServer { redis in
                let states = StateDirectories(2)
                defer { states.remove() }
                let binary = try ProxyBinary()
                let replicas = (0..<2).map { index in
                    var environment = Self.environment(amodb)
                    environment["AMODB_FLEET_SIZE"] = "2"
                    environment["AMODB_BUDGET_RESERVE"] = "2"
                    environment["AMODB_REDIS_URL"] = "redis://127.0.0.1:\(redis.port)/0"
                    environment["AMODB_STATE_DIR"] = states[index]
                    return ProxyReplica(name: "replica \(index)", binary: binary, environment: environment)
                }
                try await withServer(replicas[0]) { first in
                    try await withServer(replicas[1]) { second in
                        try await Self.start(first)
                        try await Self.start(second)
                        // Both have seen the window, and it has settled.
                        let settled = await eventually(within: 30) {
                            let firstGrants = await Self.grants(first)
                            let secondGrants = await Self.grants(second)
                            return firstGrants && secondGrants
                        }
                        try #require(settled, "the fleet's window did not settle within 30 s")
                        var next = try await Self.burst(first, from: 0, count: 12)
                        let spent = amodb.receivedRequests.count
                        #expect(spent == Self.limit - 2, "the fleet's window less the reserve: \(spent)")
                        async let flushed: Void = withRedisClient(redis.configuration()) { client in
                            _ = try await client.send(["FLUSHALL"])
                        }
                        await first.kill()
                        try await flushed
                        next = try await Self.burst(second, from: next, count: 12)
                        try await Self.start(first)
                        next = try await Self.burst(first, from: next, count: 12)
                        let refused = try await Self.get(second, "/3/movie/\(9_000_000 + next)")
                        #expect(refused.status == 503)
                        #expect(refused.text.contains("the fleet's budget was lost"), "\(refused.text)")
                    }
                }
            }
            Self.expectWithinTheLimit(amodb, "a burst, a kill and FLUSHALL in one heartbeat")
        }
    }

    /// A lone replica's calls stall in the network (a relay between it and amodb holds their
    /// bytes) until it gives them up as timed out; then the network delivers them, and amodb
    /// counts them from then. The window must not let new calls go a window after the calls
    /// were given up: amodb received them later.
    @Test func callsGivenUpAndDeliveredLaterStillCountAtAmodb() async throws {
        let amodb = try Self.startAmodb()
        try await withServer(amodb) { amodb in
            let relay = try TCPRelay(to: try #require(amodb.port))
            var environment = Self.environment(amodb)
            environment["AMODB_FLEET_SIZE"] = "1"
            environment["AMODB_UPSTREAM_URL"] = "http://127.0.0.1:\(relay.port)/3"
            // A call's time of 10 s (the timeout and 2 s): the margin the test's own delays on
            // a loaded machine (between the proxy giving up and the test seeing it) stay within.
            environment["AMODB_UPSTREAM_TIMEOUT"] = "8"
            let replica = ProxyReplica(name: "replica", binary: try ProxyBinary(), environment: environment)
            try await withServer(replica) { replica in
                try await Self.start(replica)
                relay.set(.stalled)
                // The window's calls, each given up after the upstream timeout: 504s.
                let timedOut = try await withThrowingTaskGroup(of: Int.self) { group in
                    for index in 0..<Self.limit {
                        group.addTask { try await Self.get(replica, "/3/movie/\(9_000_000 + index)").status }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                let gaveUp = ContinuousClock.now
                #expect(timedOut.allSatisfy { $0 == 504 }, "\(timedOut)")
                // The network delivers them now: amodb counts them from now on.
                try await Task.sleep(for: .seconds(1))
                relay.set(.open)
                let delivered = await eventually(within: 30) { amodb.receivedRequests.count == Self.limit }
                try #require(delivered, "amodb received \(amodb.receivedRequests.count) of the calls given up")
                // A window after they were given up, but within one of their delivery.
                try await Task.sleep(until: gaveUp + .seconds(60.5))
                let refused = try await Self.get(replica, "/3/movie/\(9_000_100)")
                #expect(refused.status == 503, "a call given up counts a call's time longer: \(refused.status)")
            }
            await relay.shutdown()
            Self.expectWithinTheLimit(amodb, "calls given up and delivered later")
        }
    }

    static func startAmodb() throws -> AmodbSandbox {
        let amodb = AmodbSandbox(configuration: .init(requestsPerMinute: limit, recordLimit: 100_000))
        _ = try amodb.start()
        return amodb
    }

    static func environment(_ amodb: AmodbSandbox) -> [String: String] {
        [
            "AMODB_UPSTREAM_URL": amodb.baseURL, "AMODB_KEY": amodb.configuration.apiKey,
            "AMODB_RATE_LIMIT": String(limit), "AMODB_MISS_WAIT": "0", "AMODB_CLIENT_SHARE": "1",
            "AMODB_ACCESS_LOG": "off",
        ]
    }

    static func start(_ replica: ProxyReplica) async throws {
        try replica.launch()
        let port = await replica.waitUntilListening()
        try #require(port != nil, "\(replica.name) did not start listening")
    }

    /// `count` paths amodb does not have (each a call, answered 404), from id `from` on;
    /// returns the next id.
    static func burst(_ replica: ProxyReplica, from: Int, count: Int) async throws -> Int {
        for index in from..<(from + count) { _ = try await get(replica, "/3/movie/\(9_000_000 + index)") }
        return from + count
    }

    static func get(_ replica: ProxyReplica, _ target: String) async throws -> RawHTTPResponse {
        let port = try #require(replica.endpoint?.port)
        return try await offloaded {
            let connection = try RawHTTPConnection(port: port, timeout: 30)
            defer { connection.close() }
            try connection.send("GET \(target) HTTP/1.1\r\nHost: amodb-proxy.test\r\nConnection: close\r\n\r\n")
            guard let response = try connection.readResponse() else { throw RawHTTPError.malformed("no answer") }
            return response
        }
    }

    /// Whether the replica sees Redis and the fleet's window grants (not paused).
    static func grants(_ replica: ProxyReplica) async -> Bool {
        guard let response = try? await get(replica, "/metrics"), response.status == 200,
            let samples = try? PrometheusSamples(response.text)
        else { return false }
        let paused = ["redis_unreachable", "budget_lost", "budget_starting"].map {
            (try? samples.value("amodb_proxy_budget_paused", ["reason": $0])) ?? 0
        }
        return (try? samples.value("amodb_proxy_redis_up")) == 1 && paused.allSatisfy { $0 == 0 }
    }

    static func expectWithinTheLimit(
        _ amodb: AmodbSandbox, _ what: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let instants = amodb.receivedRequests.map(\.receivedAt).sorted()
        let busiest = BusiestWindow(of: instants, length: .seconds(60))?.count ?? 0
        print("BudgetRestartTests: \(what): \(instants.count) calls, busiest 60 s window \(busiest)")
        #expect(busiest <= limit, "\(what): \(busiest) calls in one 60 s window", sourceLocation: sourceLocation)
    }
}
