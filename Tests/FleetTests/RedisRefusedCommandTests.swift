import AmodbRedisTestSupport
import AmodbTestSupport
import Testing

@testable import AmodbProxy

/// A Redis that refuses scripts or pub/sub (an ACL, a managed service's restrictions) is
/// named at once in one error line saying what to allow, not only as failed calls.
@Suite(
    .enabled(if: RedisServer.isInstalled, Comment(rawValue: RedisServer.notInstalledMessage)), .timeLimit(.minutes(1)))
struct RedisRefusedCommandTests {
    @Test(arguments: [("EVALSHA", ["-evalsha", "-eval"]), ("SUBSCRIBE", ["-subscribe"])])
    func aRefusedCommandTheFleetNeedsIsNamedOnceAtStart(_ missing: String, _ denied: [String]) async throws {
        let acl = ["--user", "default", "on", "nopass", "~*", "&*", "+@all"] + denied
        try await withRedisServer(arguments: acl) { server in
            let fleet = try Fleet(1, redis: server.configuration(), upstream: ScriptedUpstream())
            try await withServer(fleet) { fleet in
                #expect(
                    await eventually {
                        fleet.logs[0].all.contains {
                            $0.contains("redis refuses a command replicas need") && $0.contains(missing)
                        }
                    })
                try await Task.sleep(for: .seconds(1.5))
                #expect(fleet.logs[0].all.filter { $0.contains("redis refuses a command replicas need") }.count == 1)
            }
        }
    }
}
