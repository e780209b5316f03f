import AmodbProxy
import AmodbRedisTestSupport
import AmodbTestSupport
import Testing

/// `/readyz`'s details (the fleet's Redis, the budget, the key set) are the operator's: with
/// `AMODB_OPERATOR_PORT` they are on that port, and the public `/readyz` says only whether
/// the replica is ready.
@Suite(
    .enabled(if: RedisServer.isInstalled, Comment(rawValue: RedisServer.notInstalledMessage)), .timeLimit(.minutes(1)))
struct OperatorReadinessTests {
    @Test func thePublicReadyzLeavesItsDetailsToTheOperatorsPort() async throws {
        // A policy that may evict the budget's keys: a detail `/readyz` gives at once.
        try await withRedisServer(arguments: ["--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru"]) { server in
            try await withServer(
                try Fleet(1, redis: server.configuration(), upstream: ScriptedUpstream(fallback: .status(404, "{}"))) {
                    $0.operatorPort = 0
                }
            ) { fleet in
                let replica = fleet[0]
                let operatorPort = try #require(replica.proxy.operatorPort)
                #expect(
                    try await eventually {
                        try await replica.get("/readyz", atPort: operatorPort).text.contains("allkeys-lru")
                    }, "the operator's /readyz names what may evict the budget")
                let shown = try await replica.get("/readyz")
                #expect(shown.status == 200)
                #expect(shown.text == #"{"status":"ready"}"#, "the public /readyz: ready or not, no details")
            }
        }
    }
}
