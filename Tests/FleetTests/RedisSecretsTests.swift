import AmodbProxy
import AmodbRedis
import AmodbRedisTestSupport
import AmodbTestSupport
import Testing

/// Neither the amodb key nor a client token is ever written to Redis, and its password
/// appears in no log line or metric.
@Suite(
    .enabled(if: RedisServer.isInstalled, Comment(rawValue: RedisServer.notInstalledMessage)), .timeLimit(.minutes(1)))
struct RedisSecretsTests {
    static let token = "client-token-abcdef0123456789"

    @Test func noKeyAndNoTokenInAnyRedisKeyOrValueAfterTraffic() async throws {
        let upstream = ScriptedUpstream(
            fallback: .response(
                UpstreamResponse(
                    status: 200, headers: ["x-ratelimit-limit": "40", "x-ratelimit-remaining": "30"],
                    body: Array(ScriptedUpstream.movieDetails.utf8))))
        upstream.enqueue(.response(UpstreamResponse(status: 429, headers: ["retry-after": "1"])))
        try await withFleet(2, upstream: upstream, adjust: { $0.clientTokens = [Secret(Self.token)] }) {
            (fleet: Fleet, server: RedisServer) async throws in
            let authorized = ["Authorization": "Bearer \(Self.token)"]
            for id in [550, 551, 552] {
                #expect(try await fleet[id % 2].get("/3/movie/\(id)", headers: authorized).status == 200)
                #expect(
                    try await fleet[(id + 1) % 2].get("/3/movie/\(id)?language=de-DE", headers: authorized).status
                        == 200)
            }
            #expect(try await fleet[0].get("/3/movie/553", headers: authorized).status == 200)
            #expect(await fleet.seeEachOther())
            try await withRedisClient(server.configuration()) { redis in
                let keys = try await allKeys(redis)
                #expect(keys.contains { $0.hasPrefix("amodb-proxy:cache:") })
                #expect(keys.contains { $0.hasPrefix("amodb-proxy:budget:") })
                #expect(keys.contains("amodb-proxy:replicas"))
                for key in keys {
                    #expect(!key.contains(ProxyHarness.key) && !key.contains(Self.token))
                    // DUMP serialises any type (strings, sorted sets, hashes) as stored.
                    let dumped = try await redis.send(["DUMP", .bulk(key)]).bytes ?? []
                    let text = String(decoding: dumped, as: UTF8.self)
                    #expect(!text.contains(ProxyHarness.key) && !text.contains(Self.token), "key \(key)")
                    if let value = try? await redis.get(key) {
                        let plain = String(decoding: value, as: UTF8.self)
                        #expect(!plain.contains(ProxyHarness.key) && !plain.contains(Self.token))
                    }
                }
            }
        }
    }

    @Test func aPasswordProtectedRedisIsSharedAndItsPasswordAppearsNowhere() async throws {
        let password = "redis-pass-\(Int.random(in: 1_000_000...9_999_999))"
        try await withFleet(2, password: password) { (fleet: Fleet, _: RedisServer) async throws in
            #expect(try await fleet[0].get("/3/movie/550").status == 200)
            #expect(try await fleet[1].get("/3/movie/550").status == 200)
            #expect(fleet.upstream.calls == ["/movie/550"])
            #expect(await fleet.seeEachOther())
            for (replica, log) in zip(fleet.replicas, fleet.logs) {
                #expect(!(try await replica.get("/metrics").text.contains(password)))
                #expect(!log.all.contains { $0.contains(password) })
            }
        }
    }

    @Test func aWrongPasswordLeavesTheReplicaServingAndSaysSoWithoutThePassword() async throws {
        try await withRedisServer(password: "the-right-one") { server in
            var redis = server.configuration()
            redis.endpoint.password = RedisPassword("a-wrong-password-42")
            let upstream = ScriptedUpstream(
                fallback: .response(UpstreamResponse(status: 200, body: Array(ScriptedUpstream.movieDetails.utf8))))
            try await withServer(try Fleet(1, redis: redis, upstream: upstream) { $0.budgetReserve = 0 }) {
                (fleet: Fleet) async throws in
                #expect(await eventually { fleet.logs[0].all.contains { $0.contains("redis unreachable") } })
                let refused = try await fleet[0].get("/3/movie/550")
                #expect(refused.status == 503 && refused.header("Retry-After") != nil, "no reserve, no call")
                #expect(refused.header("Cache-Status") == "amodb-proxy; fwd=miss; detail=redis-unreachable")
                #expect(try await fleet[0].get("/readyz").status == 200)
                #expect(
                    !fleet.logs[0].all.contains { $0.contains("a-wrong-password-42") || $0.contains("the-right-one") })
            }
        }
    }
}
