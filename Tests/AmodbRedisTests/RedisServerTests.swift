import AmodbRedisTestSupport
import Testing

/// The test support's `redis-server` launcher: when a server cannot start, the error carries
/// its log, since that is what names the cause (and `start` retries on a taken port by it).
@Suite(
    .enabled(if: RedisServer.isInstalled, Comment(rawValue: RedisServer.notInstalledMessage)), .timeLimit(.minutes(1)))
struct RedisServerTests {
    @Test func aServerThatCannotBindItsPortSaysSo() async throws {
        try await withRedisServer { first in
            // A later `--port` wins over the one `start` picks: every attempt meets the first server.
            let error = await #expect(throws: RedisServer.StartError.self) {
                try await RedisServer.start(arguments: ["--port", String(first.port)])
            }
            #expect(error?.description.contains("Address already in use") == true, "\(error?.description ?? "")")
        }
    }
}
