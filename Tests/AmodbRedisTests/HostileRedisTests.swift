import AmodbRedis
import AmodbRedisTestSupport
import AmodbTestSupport
import Testing

/// A server that announces a reply larger than the proxy's commands could ever get back
/// fails the call at once with a typed error: nothing is allocated or awaited for it.
@Suite(.timeLimit(.minutes(1)))
struct HostileRedisTests {
    static let nestedPastTheElementLimit: [UInt8] =
        Array("*1024\r\n".utf8)
        + Array(
            repeating: Array("*1024\r\n".utf8) + Array(repeating: Array(":1\r\n".utf8), count: 1024).flatMap { $0 },
            count: 4
        ).flatMap { $0 }

    @Test(arguments: [
        (Array("*1000000\r\n".utf8), RESPParseError.arrayTooLong(1_000_000)),
        (Array("$20000000\r\n".utf8), RESPParseError.bulkTooLong(20_000_000)),
        (nestedPastTheElementLimit, RESPParseError.tooManyElements),
    ])
    func aReplyAnnouncingMoreThanTheLimitsFailsTheCallAtOnce(reply: [UInt8], expected: RESPParseError) async throws {
        try await withServer(try HostileRedis(replies: [Array("+PONG\r\n".utf8), reply])) {
            (hostile: HostileRedis) async throws in
            let configuration = RedisConfiguration(endpoint: RedisEndpoint(host: "127.0.0.1", port: hostile.port))
                .withTestTimeouts(command: .seconds(20))
            try await withRedisClient(configuration) { client in
                let started = ContinuousClock.now
                await #expect(throws: RedisError.protocolViolation(expected)) { _ = try await client.get("k") }
                #expect(
                    ContinuousClock.now - started < .seconds(15),
                    "refused when announced, not after the command timeout (20 s)")
            }
        }
    }

    @Test func theDefaultLimitsFitTheProxysRepliesAndNoMore() {
        let limits = RESPLimits()
        #expect(limits.maxArrayCount == 1024)
        #expect(limits.maxBulkBytes <= 4 * 1024 * 1024)
        let widened = limits.allowingBulkStrings(of: 10 * 1024 * 1024)
        #expect(widened.maxBulkBytes == 10 * 1024 * 1024)
        #expect(widened.maxReplyBytes > widened.maxBulkBytes)
        #expect(widened.maxArrayCount == limits.maxArrayCount)
    }
}
