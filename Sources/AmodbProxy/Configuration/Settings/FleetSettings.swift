import AmodbRedis

extension ConfigurationLoader {
    /// The Redis replicas share, and how they share it.
    static let fleetSettings: [Setting] = [
        Setting(
            "AMODB_REDIS_URL", flag: "--redis-url", \.redis, .redisURL,
            help: "Redis URL replicas share (redis:// or rediss:// for TLS, user:password@host:port/db); empty: off",
            accepts: "`redis[s]://[[user]:password@]host[:port][/db]`; empty: off",
            doc:
                "the Redis replicas share ([replicas](deploying.md#replicas-sharing-one-redis)); `rediss://`: TLS 1.2 or later, the server's certificate verified and its name checked ([managed Redis](deploying.md#managed-redis-tls-and-sentinel)); the password is shown as `<redacted>`"
        ),
        Setting(
            "AMODB_REDIS_CA_FILE", flag: "--redis-ca-file", \.redisParts.tls.caFile, .optional,
            help: "PEM CA file for rediss:// (a private CA); empty: the system's trust store", accepts: "a PEM file",
            doc:
                "the CA that signs the Redis server's certificate (a private CA); empty: the system's trust store; only with `rediss://`; checked at start"
        ),
        Setting(
            "AMODB_REDIS_CERT_FILE", flag: "--redis-cert-file", \.redisParts.tls.certificateFile, .optional,
            help: "PEM client certificate for rediss:// servers that require one (with AMODB_REDIS_KEY_FILE)",
            accepts: "a PEM file",
            doc:
                "client certificate (chain) for a `rediss://` server that requires one; with `AMODB_REDIS_KEY_FILE`; checked at start"
        ),
        Setting(
            "AMODB_REDIS_KEY_FILE", flag: "--redis-key-file", \.redisParts.tls.keyFile, .optional,
            help: "PEM private key of AMODB_REDIS_CERT_FILE", accepts: "a PEM file",
            doc: "the private key of `AMODB_REDIS_CERT_FILE`; must match it"),
        Setting(
            "AMODB_REDIS_SENTINELS", flag: "--redis-sentinels", \.redisParts.sentinelList, .text,
            help: "Redis Sentinel: host:port of each sentinel (comma-separated), with AMODB_REDIS_MASTER; empty: off",
            accepts: "`host[:port],…` (port 26379 if left out)",
            doc:
                "Redis Sentinel: the sentinels asked for the master before each connection; with `AMODB_REDIS_MASTER`; `AMODB_REDIS_URL` is then optional (its user, password, database and scheme are used, its host and port are not)"
        ),
        Setting(
            "AMODB_REDIS_MASTER", flag: "--redis-master", \.redisParts.master, .text,
            help: "the master's name the sentinels know (sentinel monitor <name> …)", accepts: "one word",
            doc: "the master's name in the sentinels' `sentinel monitor` line; required with `AMODB_REDIS_SENTINELS`"),
        Setting(
            "AMODB_REDIS_SENTINEL_PASSWORD", flag: "--redis-sentinel-password", \.redisParts.sentinelPassword,
            .sentinelPassword,
            help: "the sentinels' own password (requirepass in sentinel.conf); empty: none", accepts: "text",
            doc: "the sentinels' own password (`requirepass` in `sentinel.conf`), if any; shown as `<redacted>`"),
        Setting(
            "AMODB_REDIS_CLUSTER", flag: "--redis-cluster", \.redisParts.cluster, .onOff,
            help:
                "on: AMODB_REDIS_URL is one node (or the configuration endpoint) of a Redis Cluster; every key goes to one slot",
            accepts: "`on` or `off`",
            doc:
                "`on`: the Redis is a cluster (cluster mode enabled): `AMODB_REDIS_URL` names one node or the service's configuration endpoint, every key carries `{AMODB_REDIS_PREFIX}` as its hash tag so all of them live in one slot, and the proxy follows that slot's master through failovers and migrations ([cluster mode](deploying.md#redis-cluster-mode)); not with Sentinel"
        ),
        Setting(
            "AMODB_REDIS_PREFIX", flag: "--redis-prefix", \.redisPrefix, .redisPrefix,
            help: "prefix of every key written in Redis", accepts: "1–64 printable characters, no spaces",
            doc: "what every key written in Redis starts with (two deployments, one Redis)"),
        Setting(
            "AMODB_FLEET_SIZE", flag: "--fleet-size", \.fleetSize, .integer(1...1_000),
            help: "the most replicas sharing the Redis; the outage reserve is divided among them (1: a lone replica)",
            accepts: "1–1,000",
            doc:
                "the most replicas sharing the Redis: each owns `AMODB_BUDGET_RESERVE` divided by this; `1`: a lone replica, whose budget needs no Redis ([budget.md](budget.md#what-the-budget-relies-on))"
        ),
        Setting(
            "AMODB_BUDGET_RESERVE", flag: "--budget-reserve", \.budgetReserve, .optionalInteger(0...100_000),
            help:
                "calls a minute kept for replicas cut off from Redis (each spends its 1/AMODB_FLEET_SIZE); empty: a fifth of the limit",
            accepts: "0–100,000; empty: a fifth of `AMODB_RATE_LIMIT`",
            doc:
                "calls a minute the fleet's window never grants, kept for replicas that cannot use it (Redis unreachable, the window lost): each replica spends `AMODB_BUDGET_RESERVE / AMODB_FLEET_SIZE` of them on its own; `0`: such a replica calls nothing ([budget.md](budget.md#the-outage-reserve))"
        ),
    ]
}

extension SettingValue where Value == RedisConfiguration? {
    /// A `redis://` URL; empty: no Redis. Shown without its password.
    fileprivate static let redisURL = SettingValue(
        read: { value, name throws(ConfigurationError) in
            // RedisURLError's reason never quotes the password; the setting is named here.
            do throws(RedisURLError) {
                return value.isEmpty ? nil : try RedisConfiguration(url: value)
            } catch {
                throw ConfigurationError("\(name): \(error.reason)")
            }
        }, show: { $0.map { "\($0.endpoint)" } ?? "" })
}

extension SettingValue where Value == String {
    /// What Redis keys start with: short, printable, no spaces.
    fileprivate static let redisPrefix = SettingValue(
        read: { value, name throws(ConfigurationError) in
            guard !value.isEmpty, value.count <= 64, value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else {
                throw ConfigurationError(
                    "\(name) must be 1-64 printable characters without spaces, such as amodb-proxy:, not \(ConfigurationLoader.shown(value))"
                )
            }
            return value
        }, show: { $0 })
}

extension SettingValue where Value == String {
    /// Any text, kept as given (checked where it is used, with the settings it goes with).
    fileprivate static let text = SettingValue(read: { text, _ in text }, show: { $0 })
}

extension SettingValue where Value == RedisPassword? {
    /// The sentinels' password; empty: none. Shown and quoted in errors only as redacted.
    fileprivate static let sentinelPassword = SettingValue(
        read: { text, _ in text.isEmpty ? nil : RedisPassword(text) },
        show: { $0 == nil ? "" : "<redacted>" }, secrecy: .secret)
}
