@testable import AmodbProxy

/// Runs `body` with `link`, then awaits the link's shutdown, whether `body` returned or
/// threw. A shutdown left to an unawaited task (or skipped by a throw) could still be
/// running, beating and holding connections, after the test and its Redis have ended.
func withRedisLink<Value>(_ link: RedisLink, _ body: (RedisLink) async throws -> Value) async throws -> Value {
    let value: Value
    do {
        value = try await body(link)
    } catch {
        await link.shutdown()
        throw error
    }
    await link.shutdown()
    return value
}
