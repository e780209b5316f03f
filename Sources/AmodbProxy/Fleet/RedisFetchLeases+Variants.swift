import AmodbRedis

/// The second step of sharing an answer: the leader shares it as soon as it is stored (its
/// waiters, here and on other replicas, are answered at once), and the variants that the
/// queue makes later go to Redis when they are done (`shareVariants`), so that the fleet
/// compresses each fill once. The envelope is replaced only while Redis holds the same
/// answer with fewer bytes: never a newer answer another replica stored meanwhile, and
/// never a copy that already has them. It keeps its expiry.
extension RedisFetchLeases {
    /// How long the replacement may take: it runs off the request path, and carries the
    /// whole envelope, so it is given longer than a request's command.
    static let variantsTimeout = Duration.seconds(1)

    /// Replaces `KEYS[1]` with `ARGV[1]` if it holds a shorter envelope whose bytes after
    /// the version start with `ARGV[2]` (the same answer: `CacheEnvelope.answerPrefix`).
    static let variantsScript = RedisScript(
        """
        local current = redis.call('GET', KEYS[1])
        if current and #current < #ARGV[1] and string.sub(current, 2, 1 + #ARGV[2]) == ARGV[2] then
          redis.call('SET', KEYS[1], ARGV[1], 'KEEPTTL')
          return 1
        end
        return 0
        """)

    func shareVariants(_ key: String, _ entry: CachedResponse) async {
        let envelope = CacheEnvelope.encode(entry, key: key)
        let cacheKey = link.prefix + "cache:" + key
        _ = await link.call {
            try await $0.run(
                Self.variantsScript, keys: [cacheKey],
                arguments: [.bulkString(envelope), .bulkString(CacheEnvelope.answerPrefix(of: envelope))],
                timeout: Self.variantsTimeout)
        }
    }
}
