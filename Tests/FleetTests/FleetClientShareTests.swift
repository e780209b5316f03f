import AmodbProxy
import AmodbRedis
import AmodbRedisTestSupport
import AmodbTestSupport
import Testing

/// Each client's share of the calls for misses is the fleet's: made-up ids spread over
/// every replica cost that client its share once, not once per replica.
@Suite(
    .enabled(if: RedisServer.isInstalled, Comment(rawValue: RedisServer.notInstalledMessage)), .timeLimit(.minutes(1)))
struct FleetClientShareTests {
    /// Clients told apart by the `X-Forwarded-For` of a trusted peer (the tests' loopback), none
    /// exempt; `rateLimit` calls a minute of which each client may cause `share`; no wait for a call.
    static func byAddress(rateLimit: Int, share: Double) -> (inout ProxyConfiguration) -> Void {
        { configuration in
            configuration.rateLimit = rateLimit
            configuration.clientUpstreamShare = share
            configuration.rateLimitExempt = []
            configuration.trustedProxies = ["127.0.0.1"]
            configuration.missWait = 0
        }
    }

    static let greedy = ["X-Forwarded-For": "203.0.113.7"]
    static let other = ["X-Forwarded-For": "198.51.100.2"]
    static let notFound = ScriptedUpstream.Answer.response(
        UpstreamResponse(status: 404, body: Array(#"{"status_code":34,"status_message":"nope"}"#.utf8)))
    static let movie = ScriptedUpstream.Answer.response(
        UpstreamResponse(status: 200, body: Array(ScriptedUpstream.movieDetails.utf8)))

    @Test func madeUpIdsRoundRobinOverThreeReplicasCostTheClientItsShareOnceAndOthersStillGetTheirMisses() async throws
    {
        let upstream = ScriptedUpstream(fallback: Self.notFound)
        // 9 calls a minute, a third of them (3) for each client: one share per replica would be the whole window.
        try await withFleet(3, upstream: upstream, adjust: Self.byAddress(rateLimit: 9, share: 0.34)) {
            (fleet: Fleet, _: RedisServer) async throws in
            #expect(await fleet.seeEachOther())
            var statuses: [Int] = []
            var refusals: Set<String> = []
            for id in 1...30 {
                let response = try await fleet[id % 3].get("/3/movie/\(900_000 + id)", headers: Self.greedy)
                statuses.append(response.status)
                if response.status == 503 { refusals.insert(response.header("Cache-Status") ?? "") }
            }
            #expect(upstream.calls.count == 3, "the client's share of the fleet's window, whichever replica it asks")
            #expect(statuses.filter { $0 == 404 }.count == 3)
            #expect(refusals == ["amodb-proxy; fwd=miss; detail=client-share-spent"])

            upstream.setFallback(Self.movie)
            let real = try await fleet[0].get("/3/movie/550", headers: Self.other)
            #expect(real.status == 200, "another client's first real miss still has a call")
            #expect(upstream.calls.count == 4)
        }
    }

    @Test func madeUpIdsSentAllAtOnceToThreeReplicasCostNoMoreThanTheShare() async throws {
        let upstream = ScriptedUpstream(fallback: Self.notFound)
        try await withFleet(3, upstream: upstream, adjust: Self.byAddress(rateLimit: 40, share: 0.125)) {
            (fleet: Fleet, _: RedisServer) async throws in
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for id in 1...45 {
                    let replica = fleet[id % 3]
                    group.addTask { try await replica.get("/3/movie/\(900_000 + id)", headers: Self.greedy).status }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(upstream.calls.count == 5, "an eighth of 40, for the fleet")
            #expect(statuses.filter { $0 == 404 }.count == 5)
            #expect(statuses.filter { $0 == 503 }.count == 40)
        }
    }

    @Test func aRefusedShareAnswersWithTheWaitAndTheSameWordsOnEveryReplica() async throws {
        let upstream = ScriptedUpstream(fallback: Self.notFound)
        try await withFleet(2, upstream: upstream, adjust: Self.byAddress(rateLimit: 40, share: 0.05)) {
            (fleet: Fleet, _: RedisServer) async throws in
            #expect(try await fleet[0].get("/3/movie/900001", headers: Self.greedy).status == 404)
            #expect(try await fleet[0].get("/3/movie/900002", headers: Self.greedy).status == 404)
            let refused = try await fleet[1].get("/3/movie/900003", headers: Self.greedy)
            #expect(refused.status == 503)
            #expect(refused.header("Cache-Status") == "amodb-proxy; fwd=miss; detail=client-share-spent")
            #expect(refused.text.contains("This client has used its share of the proxy's amodb calls"))
            let retryAfter = try #require(refused.header("Retry-After").flatMap(Int.init))
            #expect((50...60).contains(retryAfter), "when the client's first call leaves the window")
            #expect(upstream.calls.count == 2)
        }
    }

    @Test func aMissAnsweredFromAnotherReplicasFillCostsNoShare() async throws {
        let upstream = ScriptedUpstream(fallback: Self.movie)
        // One call a window for each client.
        try await withFleet(2, upstream: upstream, adjust: Self.byAddress(rateLimit: 20, share: 0.05)) {
            (fleet: Fleet, _: RedisServer) async throws in
            #expect(try await fleet[0].get("/3/movie/550", headers: Self.other).status == 200)
            let shared = try await fleet[1].get("/3/movie/550", headers: Self.greedy)
            #expect(shared.header("Cache-Status")?.contains("detail=shared") == true)
            #expect(
                try await fleet[1].get("/3/movie/551", headers: Self.greedy).status == 200,
                "its one call is still there")
            #expect(try await fleet[0].get("/3/movie/552", headers: Self.greedy).status == 503)
            #expect(upstream.calls == ["/movie/550", "/movie/551"])
        }
    }

    @Test func aMissTheWindowRefusesCostsNoShare() async throws {
        let upstream = ScriptedUpstream(fallback: Self.notFound)
        // 4 calls a minute, half of them for each client.
        try await withFleet(2, upstream: upstream, adjust: Self.byAddress(rateLimit: 4, share: 0.5)) {
            (fleet: Fleet, server: RedisServer) async throws in
            for id in 1...2 {
                #expect(try await fleet[id % 2].get("/3/movie/\(id)", headers: Self.other).status == 404)
            }
            for id in 3...4 {
                #expect(
                    try await fleet[id % 2].get("/3/movie/\(id)", headers: ["X-Forwarded-For": "198.51.100.3"]).status
                        == 404)
            }
            for id in 5...8 {
                let refused = try await fleet[id % 2].get("/3/movie/\(id)", headers: Self.greedy)
                #expect(
                    refused.header("Cache-Status") == "amodb-proxy; fwd=miss; detail=budget-exhausted",
                    "the window is spent, the client's share is not")
            }
            try await withRedisClient(server.configuration()) { (redis: RedisClient) async throws in
                #expect(try await redis.shareKeys().count == 2, "the two clients that made calls, not the one refused")
            }
        }
    }

    @Test func withRedisStoppedEachReplicaKeepsEachClientToItsPartOfTheReserve() async throws {
        let upstream = ScriptedUpstream(fallback: Self.notFound)
        let adjust: (inout ProxyConfiguration) -> Void = { configuration in
            Self.byAddress(rateLimit: 60, share: 0.2)(&configuration)
            configuration.fleetSize = 3
            configuration.budgetReserve = 30
        }
        // 60 calls a minute, 12 for each client (a fifth); 30 kept as the reserve, 10 for each
        // replica of three: while Redis is away a client may cause a fifth of those, 2, on each.
        try await withFleet(3, upstream: upstream, adjust: adjust) { (fleet: Fleet, server: RedisServer) async throws in
            await server.stop()
            var made: [Int] = []
            for replica in 0..<3 {
                let before = upstream.calls.count
                for id in 1...8 {
                    let response = try await fleet[replica].get(
                        "/3/movie/\(900_000 + replica * 100 + id)", headers: Self.greedy)
                    #expect(response.status == 404 || response.status == 503)
                    if response.status == 503 {
                        #expect(response.header("Cache-Status") == "amodb-proxy; fwd=miss; detail=client-share-spent")
                    }
                }
                made.append(upstream.calls.count - before)
            }
            #expect(made == [2, 2, 2], "a fifth of each replica's reserve of 10")
            upstream.setFallback(Self.movie)
            #expect(
                try await fleet[0].get("/3/movie/550", headers: Self.other).status == 200,
                "another client still has its part of the reserve")
        }
    }

    @Test func theShareKeysNameNoClientAndExpireWithTheWindow() async throws {
        let upstream = ScriptedUpstream(fallback: Self.notFound)
        try await withFleet(2, upstream: upstream, adjust: Self.byAddress(rateLimit: 40, share: 0.125)) {
            (fleet: Fleet, server: RedisServer) async throws in
            for id in 1...10 { _ = try await fleet[id % 2].get("/3/movie/\(900_000 + id)", headers: Self.greedy) }
            _ = try await fleet[0].get("/3/movie/550", headers: Self.other)
            try await withRedisClient(server.configuration()) { (redis: RedisClient) async throws in
                let keys = try await redis.shareKeys()
                #expect(keys.count == 2, "one per client that made a call")
                for key in keys {
                    #expect(!key.contains("203.0.113.7") && !key.contains("198.51.100.2") && !key.contains("address"))
                    #expect(key.utf8.count <= 64)
                    let ttl = try await redis.send(["PTTL", .bulk(key)]).integer ?? -1
                    #expect(ttl > 0 && ttl <= 60_000, "gone a window after the client's last call")
                    let members = try await redis.send(["ZCARD", .bulk(key)]).integer ?? -1
                    #expect(members <= 5)
                }
            }
        }
    }
}

extension RedisClient {
    /// The clients' share keys under the fleet's prefix (a test's database is small: `KEYS` is fine).
    fileprivate func shareKeys(prefix: String = "amodb-proxy:") async throws -> [String] {
        try await send(["KEYS", .bulk(prefix + "share:*")]).array?.compactMap(\.string) ?? []
    }
}
