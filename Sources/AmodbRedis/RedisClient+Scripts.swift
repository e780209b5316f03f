/// Lua scripts: `EVALSHA` first (only the 40-byte SHA-1 on the wire), `EVAL` when the
/// server does not have the script (`NOSCRIPT` after a restart, a failover or `SCRIPT FLUSH`).
extension RedisClient {
    /// Runs `script` with `keys` (`KEYS[i]`) and `arguments` (`ARGV[i]`) and returns its reply.
    public func run(
        _ script: RedisScript, keys: [String] = [], arguments: [RedisValue] = [], timeout: Duration? = nil
    ) async throws(RedisError) -> RedisValue {
        let tail: [RedisValue] = [.integer(Int64(keys.count))] + keys.map(RedisValue.bulk) + arguments
        do {
            return try await send(["EVALSHA", .bulk(script.sha1)] + tail, timeout: timeout)
        } catch .server(let error) where error.code == "NOSCRIPT" {
            // EVAL also caches the script, so the next EVALSHA finds it.
            return try await send(["EVAL", .bulk(script.source)] + tail, timeout: timeout)
        }
    }
}
