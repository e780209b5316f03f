import AmodbRedis
import AmodbRedisTestSupport
import AmodbTestSupport
import Testing

@testable import AmodbProxy

/// A fill made by one replica serves the others; entries in Redis are trusted no more
/// than a snapshot's; prefixes keep deployments apart.
@Suite(
    .enabled(if: RedisServer.isInstalled, Comment(rawValue: RedisServer.notInstalledMessage)), .timeLimit(.minutes(1)))
struct SharedCacheTests {
    @Test(arguments: RedisTransport.available)
    func aFillMadeByOneReplicaIsServedByAnotherWithNoUpstreamCall(_ transport: RedisTransport) async throws {
        try await withFleet(2, transport: transport) { (fleet: Fleet, _: RedisServer) async throws in
            let first = try await fleet[0].get("/3/movie/550")
            #expect(first.status == 200)
            let second = try await fleet[1].get("/3/movie/550")
            #expect(second.status == 200)
            #expect(second.body == first.body)
            #expect(fleet.upstream.calls == ["/movie/550"])
            // Labelled as the hit it is: amodb was not asked for it.
            let label = try #require(second.header("Cache-Status"))
            // Its lifetime less the seconds since it was stored, a few on a loaded machine.
            let ttl = label.split(separator: ";").first { $0.hasPrefix(" ttl=") }.flatMap { Int($0.dropFirst(5)) }
            #expect(
                label.hasPrefix("amodb-proxy; hit; ttl=") && ttl.map { (1_780...1_800).contains($0) } == true
                    && label.hasSuffix("; detail=shared"), "\(label)")
            let samples = try await fleet[1].metrics()
            #expect(
                try samples.value(
                    "amodb_proxy_requests_total", ["route": "/3/movie/{movie_id}", "status": "200", "cache": "hit"])
                    == 1)
            // Kept in the second replica's memory: its next request is a plain hit.
            let third = try await fleet[1].get("/3/movie/550")
            #expect(third.header("Cache-Status")?.hasPrefix("amodb-proxy; hit") == true)
        }
    }

    @Test func aCopyFromRedisKeepsItsTrueAge() async throws {
        let clock = ManualClock()
        try await withRedisServer { server in
            let upstream = ScriptedUpstream(
                fallback: .response(UpstreamResponse(status: 200, body: Array(ScriptedUpstream.movieDetails.utf8))))
            var configuration = ProxyHarness.configuration()
            configuration.redis = server.configuration()
            let first = try ProxyHarness(.live, configuration: configuration, fetcher: upstream, clock: clock)
            try await withServer(first) { first in
                #expect(try await first.get("/3/movie/550").status == 200)
                clock.advance(by: 100)
                let second = try ProxyHarness(.live, configuration: configuration, fetcher: upstream, clock: clock)
                try await withServer(second) { second in
                    let copy = try await second.get("/3/movie/550")
                    #expect(copy.status == 200)
                    #expect(copy.header("Age") == "100")
                    #expect(upstream.calls.count == 1)
                }
            }
        }
    }

    @Test(arguments: [
        ("a movie stored under another movie's key", "/movie/5", Array(ScriptedUpstream.movieDetails.utf8)),
        ("a body that is not JSON", "/movie/550", Array("not json".utf8)),
        ("a body holding the key", "/movie/550", Array("{\"id\":550,\"k\":\"\(ProxyHarness.key)\"}".utf8)),
    ])
    func anEntryInRedisThatWouldFailASnapshotsChecksIsRefusedAndFetched(_ case: String, key: String, body: [UInt8])
        async throws
    {
        try await withFleet(1) { (fleet: Fleet, server: RedisServer) async throws in
            try await withRedisClient(server.configuration()) { redis in
                let planted = CachedResponse(body: body, storedAt: SystemClock().now(), lifetime: 1800)
                try await redis.set("amodb-proxy:cache:" + key, CacheEnvelope.encode(planted, key: key))
            }
            let answer = try await fleet[0].get("/3" + key)
            #expect(answer.status == 200)
            #expect(!answer.text.contains(ProxyHarness.key))
            #expect(fleet.upstream.calls == [key])
        }
    }

    /// A shared copy lives as long as its own route's answers may be served stale: a movie
    /// kept a day (`AMODB_MOVIE_TTL`) stays twice that, a trending list the day of max-stale.
    @Test func anEntryStaysInRedisAsLongAsItsRouteMayBeServedStale() async throws {
        try await withRedisServer { server in
            let upstream = ScriptedUpstream()
            upstream.enqueue(.response(UpstreamResponse(status: 200, body: Array(ScriptedUpstream.movieDetails.utf8))))
            var configuration = ProxyHarness.configuration()
            configuration.redis = server.configuration()
            configuration.movieTTL = 86_400
            try await withServer(try ProxyHarness(.live, configuration: configuration, fetcher: upstream)) {
                (proxy: ProxyHarness) async throws in
                #expect(try await proxy.get("/3/movie/550").status == 200)
                #expect(try await proxy.get("/3/trending/movie/week").status == 200)
            }
            try await withRedisClient(server.configuration()) { redis in
                guard case .milliseconds(let movie) = try await redis.pttl("amodb-proxy:cache:/movie/550"),
                    case .milliseconds(let trending) = try await redis.pttl("amodb-proxy:cache:/trending/movie/week")
                else {
                    Issue.record("an entry has no expiry")
                    return
                }
                #expect(movie > 172_000_000 && movie <= 172_800_000, "\(movie) ms")
                #expect(trending > 86_000_000 && trending <= 86_400_000, "\(trending) ms")
            }
        }
    }

    @Test(arguments: [
        ("another list", "/trending/tv/week", "/trending/all/week"),
        ("another page", "/trending/all/week?page=7", "/trending/all/week"),
    ])
    func anEnvelopeStoredForAnotherKeyIsRefusedAndFetched(_ case: String, asked: String, storedFor: String) async throws
    {
        try await withFleet(1, upstream: ScriptedUpstream()) { (fleet: Fleet, server: RedisServer) async throws in
            // A trending page passes every check of a trending body: only its key tells them apart.
            let page = CachedResponse(
                body: Array(ScriptedUpstream.moviePage.utf8), storedAt: SystemClock().now(), lifetime: 1800)
            try await withRedisClient(server.configuration()) { redis in
                try await redis.set("amodb-proxy:cache:" + asked, CacheEnvelope.encode(page, key: storedFor))
            }
            let answer = try await fleet[0].get("/3" + asked)
            #expect(answer.status == 200)
            #expect(fleet.upstream.calls == [asked])
            #expect(
                fleet.logs[0].all.contains {
                    $0.contains("entry in redis refused") && $0.contains("stored for another key")
                })
        }
    }

    @Test func anEnvelopeWhoseETagDoesNotMatchItsBodyIsRefused() async throws {
        try await withFleet(1) { (fleet: Fleet, server: RedisServer) async throws in
            var bytes = CacheEnvelope.encode(
                CachedResponse(
                    body: Array(ScriptedUpstream.movieDetails.utf8), storedAt: SystemClock().now(), lifetime: 1800),
                key: "/movie/550")
            // One bit of the body flipped in Redis, still well-formed JSON ("Fight Club" → "Fight Clua").
            let club = Array("Club".utf8)
            let at = try #require(bytes.indices.first { bytes[$0...].starts(with: club) })
            bytes[at + 3] ^= 0x03
            try await withRedisClient(server.configuration()) { redis in
                try await redis.set("amodb-proxy:cache:/movie/550", bytes)
            }
            #expect(try await fleet[0].get("/3/movie/550").status == 200)
            #expect(fleet.upstream.calls == ["/movie/550"])
        }
    }

    @Test func twoDeploymentsWithDifferentPrefixesShareNothing() async throws {
        try await withRedisServer { server in
            let upstream = ScriptedUpstream(
                fallback: .response(UpstreamResponse(status: 200, body: Array(ScriptedUpstream.movieDetails.utf8))))
            let one = try Fleet(1, redis: server.configuration(), upstream: upstream, prefix: "one:")
            let two = try Fleet(1, redis: server.configuration(), upstream: upstream, prefix: "two:")
            try await withServer(one) { one in
                try await withServer(two) { two in
                    #expect(try await one[0].get("/3/movie/550").status == 200)
                    #expect(try await two[0].get("/3/movie/550").status == 200)
                    #expect(upstream.calls == ["/movie/550", "/movie/550"])
                    let keys = try await withRedisClient(server.configuration()) { try await allKeys($0) }
                    #expect(!keys.isEmpty)
                    #expect(keys.allSatisfy { $0.hasPrefix("one:") || $0.hasPrefix("two:") })
                    #expect(keys.contains("one:cache:/movie/550") && keys.contains("two:cache:/movie/550"))
                }
            }
        }
    }
}

/// Every key in the server, by `SCAN`: for tests that inspect a small database (the proxy
/// itself never scans). At most 1,000 rounds, whatever cursor the server answers.
func allKeys(_ redis: RedisClient) async throws -> [String] {
    var cursor = "0"
    var keys: [String] = []
    var rounds = 0
    repeat {
        rounds += 1
        guard rounds <= 1_000 else { throw RedisError.unexpectedReply("a SCAN that does not end") }
        let reply = try await redis.send(["SCAN", .bulk(cursor), "COUNT", 1000])
        guard case .array(let parts) = reply, parts.count == 2, let next = parts[0].string,
            case .array(let found) = parts[1]
        else {
            throw RedisError.unexpectedReply(reply.description)
        }
        keys += found.compactMap(\.string)
        cursor = next
    } while cursor != "0"
    return keys
}
