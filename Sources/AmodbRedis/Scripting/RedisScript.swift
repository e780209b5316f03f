/// A Lua script and its SHA-1, so it can be run with `EVALSHA` (the SHA-1 alone on the
/// wire) and sent in full with `EVAL` only when the server answers `NOSCRIPT` (after a
/// restart, a failover or `SCRIPT FLUSH`).
public struct RedisScript: Sendable, Hashable {
    /// The Lua source.
    public let source: String
    /// Its SHA-1 in lower-case hex: the name Redis caches it under.
    public let sha1: String

    /// Wraps `source` and computes its SHA-1.
    public init(_ source: String) {
        self.source = source
        self.sha1 = SHA1.hexDigest(Array(source.utf8))
    }
}
