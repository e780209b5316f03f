import AmodbModels
import AmodbRedis
import AmodbSockets
import Foundation

/// What the command line asks for.
public enum Command: Sendable {
    /// Serve with this configuration.
    case serve(ProxyConfiguration)
    /// Print the usage text.
    case help
    /// Print the version.
    case version
    /// Check that a proxy on this configuration's port answers `/healthz` (container HEALTHCHECK).
    case healthcheck(ProxyConfiguration)
    /// Print the effective configuration, secrets redacted.
    case checkConfig(ProxyConfiguration)
    /// Replay an access log through the cache and budget for several plans and TTLs (`amodb-proxy plan`).
    case plan(PlanOptions)
}

/// A configuration that cannot be used, said in one line.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    /// The setting at fault, by its environment name (`AMODB_CACHE_TTL`); `nil` when the
    /// problem is no one setting's (an unknown flag, a missing key).
    public let setting: String?
    /// What is wrong, naming the setting, on one line; a secret in it is redacted.
    public let description: String

    init(_ description: String, setting: String? = nil) {
        self.description = description
        self.setting = setting
    }
}

/// Reads settings from defaults, a `KEY=value` file, the environment and flags, in
/// rising precedence. Every setting has one environment name and one flag, listed in
/// `settings`, which also writes `--help`.
public enum ConfigurationLoader {
    /// The version `--version` prints.
    public static let version = "0.1.0"
    /// Read when present and no `--config`/`AMODB_CONFIG` names another file.
    public static let defaultConfigPath = "config/amodb-proxy.conf"

    struct Setting: Sendable {
        let variable: String
        let flag: String
        let help: String
        /// The setting's value in a configuration, as `--check-config` prints it (secrets redacted).
        let show: @Sendable (ProxyConfiguration) -> String
        let apply: @Sendable (inout ProxyConfiguration, String) throws(ConfigurationError) -> Void
    }

    static let settings: [Setting] = [
        Setting(
            variable: "AMODB_KEY", flag: "", help: "amodb API key (prefer AMODB_KEY_FILE in containers)",
            show: { config in config.apiKey.isEmpty ? "" : "<redacted>" }
        ) { config, value throws(ConfigurationError) in
            config.apiKey = try apiKey(value, "AMODB_KEY")
        },
        Setting(
            variable: "AMODB_KEY_FILE", flag: "--key-file", help: "file holding the amodb API key",
            show: { config in "" }
        ) { config, value throws(ConfigurationError) in
            guard let data = readFile(value) else {
                throw ConfigurationError("cannot read AMODB_KEY_FILE \(shown(value))")
            }
            config.apiKey = try apiKey(String(decoding: data, as: UTF8.self), "AMODB_KEY_FILE")
            if config.apiKey.isEmpty { throw ConfigurationError("AMODB_KEY_FILE \(shown(value)) holds no key") }
        },
        Setting(
            variable: "AMODB_UPSTREAM_URL", flag: "--upstream-url", help: "amodb API root",
            show: { config in config.upstreamURL }
        ) { config, value throws(ConfigurationError) in
            guard let url = URL(string: value), let scheme = url.scheme?.lowercased(),
                scheme == "http" || scheme == "https",
                url.host != nil, url.query == nil
            else {
                throw ConfigurationError(
                    "AMODB_UPSTREAM_URL must be an http(s) URL such as https://api.amodb.dev/3, not \(shown(value))")
            }
            config.upstreamURL = value.hasSuffix("/") ? String(value.dropLast()) : value
        },
        Setting(variable: "HOST", flag: "--host", help: "address to listen on", show: { config in config.host }) {
            config, value throws(ConfigurationError) in
            // What the listener binds: an address, not a name (nothing is resolved at start).
            guard SocketAddress(host: value, port: 0) != nil else {
                throw ConfigurationError(
                    "HOST must be an IP address to listen on, such as 0.0.0.0, 127.0.0.1 or :: (names such as localhost are not resolved), not \(shown(value))"
                )
            }
            config.host = value
        },
        Setting(variable: "PORT", flag: "--port", help: "port to listen on", show: { config in String(config.port) }) {
            config, value throws(ConfigurationError) in
            config.port = try integer(value, "PORT", 0...65535)
        },
        Setting(
            variable: "AMODB_CACHE_TTL", flag: "--cache-ttl", help: "seconds a stored trending list is fresh",
            show: { config in format(config.cacheTTL) }
        ) { config, value throws(ConfigurationError) in
            config.cacheTTL = try seconds(value, "AMODB_CACHE_TTL", 1...year)
        },
        Setting(
            variable: "AMODB_MOVIE_TTL", flag: "--movie-ttl", help: "seconds stored movie details are fresh",
            show: { config in format(config.movieTTL) }
        ) { config, value throws(ConfigurationError) in
            config.movieTTL = try seconds(value, "AMODB_MOVIE_TTL", 1...year)
        },
        Setting(
            variable: "AMODB_CONFIGURATION_TTL", flag: "--configuration-ttl",
            help: "seconds the stored /3/configuration is fresh", show: { config in format(config.configurationTTL) }
        ) { config, value throws(ConfigurationError) in
            config.configurationTTL = try seconds(value, "AMODB_CONFIGURATION_TTL", 1...year)
        },
        Setting(
            variable: "AMODB_CACHE_MAX_BYTES", flag: "--cache-max-bytes", help: "most body bytes the cache holds",
            show: { config in String(config.cacheMaxBytes) }
        ) { config, value throws(ConfigurationError) in
            config.cacheMaxBytes = try integer(value, "AMODB_CACHE_MAX_BYTES", 1024...(1 << 40))
        },
        Setting(
            variable: "AMODB_MAX_STALE", flag: "--max-stale", help: "seconds a stale answer may still be served",
            show: { config in format(config.maxStaleSeconds) }
        ) { config, value throws(ConfigurationError) in
            config.maxStaleSeconds = try seconds(value, "AMODB_MAX_STALE", 0...year)
        },
        Setting(
            variable: "AMODB_NEGATIVE_TTL", flag: "--negative-ttl",
            help: "seconds amodb's 404 for a path is remembered", show: { config in format(config.negativeTTL) }
        ) { config, value throws(ConfigurationError) in
            config.negativeTTL = try seconds(value, "AMODB_NEGATIVE_TTL", 0...day)
        },
        Setting(
            variable: "AMODB_RATE_LIMIT", flag: "--rate-limit",
            help: "calls to amodb per minute at most (plan: 20, 40, 120)", show: { config in String(config.rateLimit) }
        ) { config, value throws(ConfigurationError) in
            config.rateLimit = try integer(value, "AMODB_RATE_LIMIT", 1...100_000)
        },
        Setting(
            variable: "AMODB_MISS_WAIT", flag: "--miss-wait",
            help: "seconds a miss waits for a call when the budget is spent",
            show: { config in format(config.missWait) }
        ) { config, value throws(ConfigurationError) in
            config.missWait = try seconds(value, "AMODB_MISS_WAIT", 0...30)
        },
        Setting(
            variable: "AMODB_CLIENT_SHARE", flag: "--client-share",
            help: "each client's share of the calls for misses, 0-1; 1: no limit",
            show: { config in format(config.clientUpstreamShare) }
        ) { config, value throws(ConfigurationError) in
            guard let share = Double(value.trimmingSpacesAndNewlines()), share.isFinite, share > 0, share <= 1 else {
                throw ConfigurationError(
                    "AMODB_CLIENT_SHARE must be a fraction above 0 and at most 1 (such as 0.125), not \(shown(value))")
            }
            config.clientUpstreamShare = share
        },
        Setting(
            variable: "AMODB_LANGUAGES", flag: "--languages", help: "amodb's translated languages; others share en-US",
            show: { config in config.languages.joined(separator: ",") }
        ) { config, value throws(ConfigurationError) in
            var languages: [String] = []
            for tag in value.split(separator: ",") {
                do {
                    languages.append(try AmodbRequest.normalizedLanguage(String(tag.trimmingSpacesAndNewlines())))
                } catch {
                    throw ConfigurationError(
                        "AMODB_LANGUAGES must be a comma-separated list of tags such as en-US,de-DE, not \(shown(value))"
                    )
                }
            }
            guard !languages.isEmpty else {
                throw ConfigurationError("AMODB_LANGUAGES must name at least one language")
            }
            config.languages = languages
        },
        Setting(
            variable: "AMODB_CACHE_SNAPSHOT", flag: "--cache-snapshot",
            help: "file the cache is saved to and loaded from; empty: off",
            show: { config in config.snapshotPath ?? "" }
        ) { config, value in
            config.snapshotPath = value.isEmpty ? nil : value
        },
        Setting(
            variable: "AMODB_SNAPSHOT_INTERVAL", flag: "--snapshot-interval", help: "seconds between cache snapshots",
            show: { config in format(config.snapshotIntervalSeconds) }
        ) { config, value throws(ConfigurationError) in
            config.snapshotIntervalSeconds = try seconds(value, "AMODB_SNAPSHOT_INTERVAL", 1...day)
        },
        Setting(
            variable: "AMODB_UPSTREAM_TIMEOUT", flag: "--upstream-timeout", help: "seconds to wait for amodb",
            show: { config in format(config.upstreamTimeout) }
        ) { config, value throws(ConfigurationError) in
            config.upstreamTimeout = try seconds(value, "AMODB_UPSTREAM_TIMEOUT", 0.1...hour)
        },
        Setting(
            variable: "AMODB_MAX_UPSTREAM_BYTES", flag: "--max-upstream-bytes",
            help: "largest amodb body in bytes, after decoding", show: { config in String(config.maxUpstreamBytes) }
        ) { config, value throws(ConfigurationError) in
            config.maxUpstreamBytes = try integer(value, "AMODB_MAX_UPSTREAM_BYTES", 1024...1_073_741_824)
        },
        Setting(
            variable: "AMODB_RETRY_AFTER_MAX", flag: "--retry-after-max",
            help: "longest amodb Retry-After waited out, seconds", show: { config in format(config.retryAfterCap) }
        ) { config, value throws(ConfigurationError) in
            config.retryAfterCap = try seconds(value, "AMODB_RETRY_AFTER_MAX", 0...hour)
        },
        Setting(
            variable: "AMODB_SHUTDOWN_GRACE", flag: "--shutdown-grace",
            help: "seconds in-flight requests get on SIGTERM", show: { config in format(config.shutdownGraceSeconds) }
        ) { config, value throws(ConfigurationError) in
            config.shutdownGraceSeconds = try seconds(value, "AMODB_SHUTDOWN_GRACE", 0...hour)
        },
        Setting(
            variable: "AMODB_PROXY_TOKENS", flag: "",
            help: "client tokens (comma-separated) required as Bearer; none: open",
            show: { config in config.clientTokens.isEmpty ? "" : "<\(config.clientTokens.count) redacted>" }
        ) { config, value in
            config.clientTokens = value.split(separator: ",").map { Secret(String($0)) }.filter { !$0.isEmpty }
        },
        Setting(
            variable: "AMODB_PROXY_TOKENS_FILE", flag: "--tokens-file",
            help: "file of client tokens, one per line, re-read on change",
            show: { config in config.clientTokensFile ?? "" }
        ) { config, value in
            config.clientTokensFile = value.isEmpty ? nil : value
        },
        Setting(
            variable: "AMODB_JWT_SECRET", flag: "",
            help: "HS256 secret of users' ID tokens, 32 bytes or more (prefer AMODB_JWT_SECRET_FILE)",
            show: { config in config.jwtSecret == nil ? "" : "<redacted>" }
        ) { config, value throws(ConfigurationError) in
            config.jwtSecret = try jwtSecret(value, "AMODB_JWT_SECRET")
        },
        Setting(
            variable: "AMODB_JWT_SECRET_FILE", flag: "--jwt-secret-file",
            help: "file holding the HS256 secret of users' ID tokens", show: { config in "" }
        ) { config, value throws(ConfigurationError) in
            guard let data = readFile(value) else {
                throw ConfigurationError("cannot read AMODB_JWT_SECRET_FILE \(shown(value))")
            }
            config.jwtSecret = try jwtSecret(String(decoding: data, as: UTF8.self), "AMODB_JWT_SECRET_FILE")
        },
        Setting(
            variable: "AMODB_JWT_JWKS_URL", flag: "--jwt-jwks-url",
            help: "JWKS URL of the RS256/ES256 keys of users' ID tokens; empty: none",
            show: { config in config.jwksURL ?? "" }
        ) { config, value throws(ConfigurationError) in
            let text = String(value.trimmingSpacesAndNewlines())
            guard !text.isEmpty else {
                config.jwksURL = nil
                return
            }
            // Checked before anything else, as the other errors quote the value: a user name
            // or password would be sent with every fetch and shown wherever the URL is.
            if hasCredentials(text) {
                throw ConfigurationError(
                    "AMODB_JWT_JWKS_URL holds a user name or password (user:password@host); a key set is public and is fetched without credentials: remove them (the URL is not shown)"
                )
            }
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
                scheme == "http" || scheme == "https", url.host != nil
            else {
                throw ConfigurationError(
                    "AMODB_JWT_JWKS_URL must be an http(s) URL such as https://appleid.apple.com/auth/keys, not \(shown(value))"
                )
            }
            config.jwksURL = text
        },
        Setting(
            variable: "AMODB_JWT_ISSUER", flag: "--jwt-issuer",
            help: "accepted iss values of users' ID tokens (comma-separated)",
            show: { config in config.jwtIssuers.joined(separator: ",") }
        ) { config, value in
            config.jwtIssuers = list(value)
        },
        Setting(
            variable: "AMODB_JWT_AUDIENCE", flag: "--jwt-audience",
            help: "accepted aud values of users' ID tokens (comma-separated)",
            show: { config in config.jwtAudiences.joined(separator: ",") }
        ) { config, value in
            config.jwtAudiences = list(value)
        },
        Setting(
            variable: "AMODB_JWT_LEEWAY", flag: "--jwt-leeway",
            help: "seconds of clock skew allowed on exp, nbf and iat", show: { config in format(config.jwtLeeway) }
        ) { config, value throws(ConfigurationError) in
            config.jwtLeeway = try seconds(value, "AMODB_JWT_LEEWAY", 0...hour)
        },
        Setting(
            variable: "AMODB_REDIS_URL", flag: "--redis-url",
            help: "Redis URL replicas share (redis:// or rediss:// for TLS, user:password@host:port/db); empty: off",
            show: { config in config.redis.map { "\($0.endpoint)" } ?? "" }
        ) { config, value throws(ConfigurationError) in
            // RedisURLError's reason never quotes the password; the setting is named here.
            do throws(RedisURLError) {
                config.redis = value.isEmpty ? nil : try RedisConfiguration(url: value)
            } catch {
                throw ConfigurationError("AMODB_REDIS_URL: \(error.reason)", setting: "AMODB_REDIS_URL")
            }
        },
        Setting(
            variable: "AMODB_REDIS_CA_FILE", flag: "--redis-ca-file",
            help: "PEM CA file for rediss:// (a private CA); empty: the system's trust store",
            show: { config in config.redisTLS.caFile ?? "" }
        ) { config, value in
            config.redisTLS.caFile = value.isEmpty ? nil : value
        },
        Setting(
            variable: "AMODB_REDIS_CERT_FILE", flag: "--redis-cert-file",
            help: "PEM client certificate for rediss:// servers that require one (with AMODB_REDIS_KEY_FILE)",
            show: { config in config.redisTLS.certificateFile ?? "" }
        ) { config, value in
            config.redisTLS.certificateFile = value.isEmpty ? nil : value
        },
        Setting(
            variable: "AMODB_REDIS_KEY_FILE", flag: "--redis-key-file",
            help: "PEM private key of AMODB_REDIS_CERT_FILE",
            show: { config in config.redisTLS.keyFile ?? "" }
        ) { config, value in
            config.redisTLS.keyFile = value.isEmpty ? nil : value
        },
        Setting(
            variable: "AMODB_REDIS_SENTINELS", flag: "--redis-sentinels",
            help: "Redis Sentinel: host:port of each sentinel (comma-separated), with AMODB_REDIS_MASTER; empty: off",
            show: { config in config.redisSentinelList }
        ) { config, value in
            config.redisSentinelList = value
        },
        Setting(
            variable: "AMODB_REDIS_MASTER", flag: "--redis-master",
            help: "the master's name the sentinels know (sentinel monitor <name> …)",
            show: { config in config.redisMaster }
        ) { config, value in
            config.redisMaster = value
        },
        Setting(
            variable: "AMODB_REDIS_SENTINEL_PASSWORD", flag: "--redis-sentinel-password",
            help: "the sentinels' own password (requirepass in sentinel.conf); empty: none",
            show: { config in config.redisSentinelPassword == nil ? "" : "<redacted>" }
        ) { config, value in
            config.redisSentinelPassword = value.isEmpty ? nil : RedisPassword(value)
        },
        Setting(
            variable: "AMODB_REDIS_PREFIX", flag: "--redis-prefix", help: "prefix of every key written in Redis",
            show: { config in config.redisPrefix }
        ) { config, value throws(ConfigurationError) in
            guard !value.isEmpty, value.count <= 64, value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else {
                throw ConfigurationError(
                    "AMODB_REDIS_PREFIX must be 1-64 printable characters without spaces, such as amodb-proxy:, not \(shown(value))"
                )
            }
            config.redisPrefix = value
        },
        Setting(
            variable: "AMODB_FLEET_SIZE", flag: "--fleet-size",
            help: "the most replicas sharing the Redis; each spends 1/N of the limit while Redis is away",
            show: { config in String(config.fleetSize) }
        ) { config, value throws(ConfigurationError) in
            config.fleetSize = try integer(value, "AMODB_FLEET_SIZE", 1...1_000)
        },
        Setting(
            variable: "AMODB_CLIENT_RATE_LIMIT", flag: "--client-rate-limit",
            help: "requests a minute per client; 0: off", show: { config in String(config.clientRateLimit) }
        ) { config, value throws(ConfigurationError) in
            config.clientRateLimit = try integer(value, "AMODB_CLIENT_RATE_LIMIT", 0...10_000_000)
        },
        Setting(
            variable: "AMODB_CLIENT_BURST", flag: "--client-burst", help: "requests a client may make at once",
            show: { config in String(config.clientBurst) }
        ) { config, value throws(ConfigurationError) in
            config.clientBurst = try integer(value, "AMODB_CLIENT_BURST", 1...10_000_000)
        },
        Setting(
            variable: "AMODB_RATE_LIMIT_EXEMPT", flag: "--rate-limit-exempt",
            help: "client addresses (IPs/CIDRs) not limited per address",
            show: { config in config.rateLimitExempt.joined(separator: ",") }
        ) { config, value throws(ConfigurationError) in
            config.rateLimitExempt = try networks(value, "AMODB_RATE_LIMIT_EXEMPT")
        },
        Setting(
            variable: "AMODB_TRUSTED_PROXIES", flag: "--trusted-proxies",
            help: "peers (IPs/CIDRs) whose X-Forwarded-For is believed",
            show: { config in config.trustedProxies.joined(separator: ",") }
        ) { config, value throws(ConfigurationError) in
            config.trustedProxies = try networks(value, "AMODB_TRUSTED_PROXIES")
        },
        Setting(
            variable: "AMODB_CORS_ORIGINS", flag: "--cors-origins",
            help: "origins web apps may call from (comma-separated, or *)",
            show: { config in config.corsOrigins.joined(separator: ",") }
        ) { config, value throws(ConfigurationError) in
            let origins = value.split(separator: ",").map { String($0.trimmingSpacesAndNewlines()) }.filter {
                !$0.isEmpty
            }
            for origin in origins
            where origin != "*" && !(origin.hasPrefix("http://") || origin.hasPrefix("https://"))
                || origin.hasSuffix("/")
            {
                throw ConfigurationError(
                    "AMODB_CORS_ORIGINS must list origins such as https://app.example.com (no path), or *, not \(shown(origin))"
                )
            }
            config.corsOrigins = origins
        },
        Setting(
            variable: "AMODB_ACCESS_LOG", flag: "--access-log", help: "one line per request on stdout: on or off",
            show: { config in config.accessLog ? "on" : "off" }
        ) { config, value throws(ConfigurationError) in
            switch value.lowercased() {
            case "on", "true", "1", "yes": config.accessLog = true
            case "off", "false", "0", "no": config.accessLog = false
            default: throw ConfigurationError("AMODB_ACCESS_LOG must be on or off, not \(shown(value))")
            }
        },
        Setting(
            variable: "AMODB_LOG_FORMAT", flag: "--log-format", help: "json or text",
            show: { config in config.logFormat.rawValue }
        ) { config, value throws(ConfigurationError) in
            guard let format = LogFormat(rawValue: value.lowercased()) else {
                throw ConfigurationError("AMODB_LOG_FORMAT must be json or text, not \(shown(value))")
            }
            config.logFormat = format
        },
        Setting(
            variable: "AMODB_LOG_LEVEL", flag: "--log-level", help: "debug, info, warning or error",
            show: { config in config.logLevel.name }
        ) { config, value throws(ConfigurationError) in
            guard let level = ProxyLogger.Level(name: value) else {
                throw ConfigurationError("AMODB_LOG_LEVEL must be debug, info, warning or error, not \(shown(value))")
            }
            config.logLevel = level
        },
        Setting(
            variable: "AMODB_MAX_CONNECTIONS", flag: "--max-connections", help: "open client connections at most",
            show: { config in String(config.limits.maxConnections) }
        ) { config, value throws(ConfigurationError) in
            config.limits.maxConnections = try integer(value, "AMODB_MAX_CONNECTIONS", 1...1_000_000)
        },
        Setting(
            variable: "AMODB_MAX_REQUEST_LINE", flag: "--max-request-line",
            help: "longest request line in bytes, else 414",
            show: { config in String(config.limits.maxRequestLineBytes) }
        ) { config, value throws(ConfigurationError) in
            config.limits.maxRequestLineBytes = try integer(value, "AMODB_MAX_REQUEST_LINE", 64...1_048_576)
        },
        Setting(
            variable: "AMODB_MAX_HEADER_BYTES", flag: "--max-header-bytes",
            help: "largest header block in bytes, else 431", show: { config in String(config.limits.maxHeaderBytes) }
        ) { config, value throws(ConfigurationError) in
            config.limits.maxHeaderBytes = try integer(value, "AMODB_MAX_HEADER_BYTES", 256...1_048_576)
        },
        Setting(
            variable: "AMODB_MAX_HEADER_COUNT", flag: "--max-header-count", help: "most header fields, else 431",
            show: { config in String(config.limits.maxHeaderCount) }
        ) { config, value throws(ConfigurationError) in
            config.limits.maxHeaderCount = try integer(value, "AMODB_MAX_HEADER_COUNT", 1...10_000)
        },
        Setting(
            variable: "AMODB_MAX_BODY_BYTES", flag: "--max-body-bytes",
            help: "largest (discarded) GET body in bytes, else 413",
            show: { config in String(config.limits.maxBodyBytes) }
        ) { config, value throws(ConfigurationError) in
            config.limits.maxBodyBytes = try integer(value, "AMODB_MAX_BODY_BYTES", 0...1_048_576)
        },
        Setting(
            variable: "AMODB_READ_BUFFER_BYTES", flag: "--read-buffer-bytes",
            help: "unparsed input held per connection at most",
            show: { config in String(config.limits.maxReadBufferBytes) }
        ) { config, value throws(ConfigurationError) in
            config.limits.maxReadBufferBytes = try integer(value, "AMODB_READ_BUFFER_BYTES", 1024...16_777_216)
        },
        Setting(
            variable: "AMODB_MAX_PIPELINED", flag: "--max-pipelined", help: "requests read ahead per connection",
            show: { config in String(config.limits.maxPipelinedRequests) }
        ) { config, value throws(ConfigurationError) in
            config.limits.maxPipelinedRequests = try integer(value, "AMODB_MAX_PIPELINED", 1...1024)
        },
        Setting(
            variable: "AMODB_HEAD_TIMEOUT", flag: "--head-timeout", help: "seconds for a whole request head, else 408",
            show: { config in format(config.timeouts.requestHeadSeconds) }
        ) { config, value throws(ConfigurationError) in
            config.timeouts.requestHeadSeconds = try seconds(value, "AMODB_HEAD_TIMEOUT", 0.1...hour)
        },
        Setting(
            variable: "AMODB_BODY_TIMEOUT", flag: "--body-timeout",
            help: "seconds for a whole request body after its head, else 408",
            show: { config in format(config.timeouts.requestBodySeconds) }
        ) { config, value throws(ConfigurationError) in
            config.timeouts.requestBodySeconds = try seconds(value, "AMODB_BODY_TIMEOUT", 0.1...hour)
        },
        Setting(
            variable: "AMODB_IDLE_TIMEOUT", flag: "--idle-timeout",
            help: "seconds an idle keep-alive connection stays open",
            show: { config in format(config.timeouts.idleSeconds) }
        ) { config, value throws(ConfigurationError) in
            config.timeouts.idleSeconds = try seconds(value, "AMODB_IDLE_TIMEOUT", 0.1...day)
        },
        Setting(
            variable: "AMODB_WRITE_TIMEOUT", flag: "--write-timeout", help: "seconds a client may stall our response",
            show: { config in format(config.timeouts.writeSeconds) }
        ) { config, value throws(ConfigurationError) in
            config.timeouts.writeSeconds = try seconds(value, "AMODB_WRITE_TIMEOUT", 0.1...hour)
        },
    ]

    /// Parses `arguments` (without the program name) over `environment`.
    /// A bad value is quoted in the error to help; should the value be a secret (the key
    /// pasted into the wrong setting, from `AMODB_KEY` or from the key file), it is
    /// redacted first.
    public static func load(arguments: [String], environment: [String: String]) throws(ConfigurationError) -> Command {
        var configuration = ProxyConfiguration()
        do {
            return try parse(arguments: arguments, environment: environment, into: &configuration)
        } catch {
            var secrets = [configuration.apiKey] + configuration.clientTokens
            secrets += [configuration.jwtSecret].compactMap { $0 }
            secrets +=
                ([environment["AMODB_KEY"], environment["AMODB_JWT_SECRET"]]
                + (environment["AMODB_PROXY_TOKENS"]?.split(separator: ",").map(String.init) ?? []))
                .compactMap { $0 }.map(Secret.init)
            // A key file named anywhere may not have been read when the error struck.
            secrets += keyFilePaths(arguments: arguments, environment: environment)
                .compactMap { readFile($0) }.map { Secret(String(decoding: $0, as: UTF8.self).trimmingByteOrderMark()) }
            // Too short to be a real key or token, a value would only garble the message.
            let logger = ProxyLogger(secrets: secrets.filter { $0.revealed.count >= 6 }, sink: { _ in })
            throw ConfigurationError(logger.scrubbed(error.description), setting: error.setting)
        }
    }

    /// Environment variables named like settings (`AMODB_…`) that are none, each with the
    /// setting it most likely meant, in name order: a misspelled name (`AMODB_RATELIMIT`,
    /// `AMODB_TOKENS`) would otherwise leave a default, or an open proxy, without a word.
    /// Only names: a value may be a secret.
    public static func unknownSettings(in environment: [String: String]) -> [(name: String, closest: String)] {
        let known = Set(settings.map(\.variable) + ["AMODB_CONFIG", "AMODB_SANDBOX"])
        return environment.keys.filter { $0.hasPrefix("AMODB_") && !known.contains($0) }.sorted().map { name in
            (name, closestSetting(to: name, among: known.sorted()))
        }
    }

    /// The name in `names` nearest to `name`: one that holds it, or that it holds, whole
    /// (`AMODB_TOKENS` in `AMODB_PROXY_TOKENS`), else the fewest edits; the shorter on a tie.
    static func closestSetting(to name: String, among names: [String]) -> String {
        let word = Array(name.dropFirst("AMODB_".count).uppercased().utf8)
        func distance(_ other: String) -> Int {
            let candidate = Array(other.dropFirst(other.hasPrefix("AMODB_") ? "AMODB_".count : 0).utf8)
            if !word.isEmpty, candidate.count != word.count,
                String(decoding: candidate, as: UTF8.self).contains(String(decoding: word, as: UTF8.self))
                    || String(decoding: word, as: UTF8.self).contains(String(decoding: candidate, as: UTF8.self))
            {
                return 1
            }
            // Levenshtein, one row at a time.
            var previous = Array(0...candidate.count)
            for (i, a) in word.enumerated() {
                var current = [i + 1] + Array(repeating: 0, count: candidate.count)
                for (j, b) in candidate.enumerated() {
                    current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (a == b ? 0 : 1))
                }
                previous = current
            }
            return previous[candidate.count]
        }
        return names.min { (distance($0), $0.count, $0) < (distance($1), $1.count, $1) } ?? "AMODB_KEY"
    }

    /// What the command line asks for besides settings.
    private enum Mode {
        case serve, healthcheck, checkConfig
    }

    private static func parse(
        arguments: [String], environment: [String: String], into configuration: inout ProxyConfiguration
    ) throws(ConfigurationError) -> Command {
        // A command of its own, with its own options: it serves nothing and reads no settings.
        if arguments.first == "plan" { return try PlanOptions.command(arguments: Array(arguments.dropFirst())) }
        var flags: [(Setting, String)] = []
        var configPath = environment["AMODB_CONFIG"]
        var sandbox = environment["AMODB_SANDBOX"].map { $0 == "1" || $0.lowercased() == "true" } ?? false
        var mode = Mode.serve
        var reader = ArgumentReader(arguments)
        while let name = reader.next() {
            switch name {
            case "-h", "--help": return .help
            case "--version": return .version
            case "--healthcheck": mode = .healthcheck
            case "--check-config": mode = .checkConfig
            case "--sandbox": sandbox = true
            case "--config": configPath = try reader.value()
            default:
                guard let setting = settings.first(where: { !$0.flag.isEmpty && $0.flag == name }) else {
                    throw ConfigurationError("unknown option \(shown(reader.argument)); see --help")
                }
                flags.append((setting, try reader.value()))
            }
        }

        configuration.sandbox = sandbox
        // The settings given a value anywhere (the file, the environment, a flag).
        var given = Set<String>()
        let explicitFile = configPath != nil
        let path = configPath ?? defaultConfigPath
        if let data = readFile(path) {
            for (variable, value) in try parseFile(
                String(decoding: data, as: UTF8.self).trimmingByteOrderMark(), path: path)
            {
                guard let setting = settings.first(where: { $0.variable == variable }) else {
                    throw ConfigurationError("unknown setting \(shown(variable)) in the configuration file")
                }
                try apply(setting, value, to: &configuration)
                if !value.isEmpty { given.insert(variable) }
            }
        } else if explicitFile {
            throw ConfigurationError("cannot read the configuration file \(shown(path))", setting: "AMODB_CONFIG")
        }
        for setting in settings {
            if let value = environment[setting.variable] {
                try apply(setting, value, to: &configuration)
                if !value.isEmpty { given.insert(setting.variable) }
            }
        }
        for (setting, value) in flags {
            try apply(setting, value, to: &configuration)
            if !value.isEmpty { given.insert(setting.variable) }
        }
        try applyRedisTLS(to: &configuration)
        try applyRedisSentinels(to: &configuration)
        if configuration.limits.maxReadBufferBytes < configuration.limits.minimumReadBufferBytes {
            throw ConfigurationError(
                "AMODB_READ_BUFFER_BYTES must hold a whole request head: at least AMODB_MAX_REQUEST_LINE + AMODB_MAX_HEADER_BYTES + 4 = \(configuration.limits.minimumReadBufferBytes)",
                setting: "AMODB_READ_BUFFER_BYTES")
        }
        // Rules for users' tokens with nothing to check them with would do nothing, silently:
        // the operator meant to require sign-in. The leeway at its default is no rule
        // (`--check-config` prints it, and its output is a settings file).
        if configuration.jwtLeeway == ProxyConfiguration.defaults.jwtLeeway { given.remove("AMODB_JWT_LEEWAY") }
        if !configuration.verifiesUserTokens,
            let rule = ["AMODB_JWT_ISSUER", "AMODB_JWT_AUDIENCE", "AMODB_JWT_LEEWAY"].first(where: given.contains)
        {
            throw ConfigurationError(
                "\(rule) is set, but neither AMODB_JWT_JWKS_URL nor AMODB_JWT_SECRET (or AMODB_JWT_SECRET_FILE) is: set the sign-in provider's key set URL (RS256, ES256) or its HS256 secret, or remove \(rule)",
                setting: "AMODB_JWT_JWKS_URL")
        }
        if configuration.verifiesUserTokens {
            let source = configuration.jwtSecret != nil ? "AMODB_JWT_SECRET" : "AMODB_JWT_JWKS_URL"
            if configuration.jwtIssuers.isEmpty {
                throw ConfigurationError(
                    "AMODB_JWT_ISSUER is required with \(source): list the accepted iss values (such as https://appleid.apple.com)",
                    setting: "AMODB_JWT_ISSUER")
            }
            if configuration.jwtAudiences.isEmpty {
                throw ConfigurationError(
                    "AMODB_JWT_AUDIENCE is required with \(source): list the accepted aud values (such as the app's bundle id)",
                    setting: "AMODB_JWT_AUDIENCE")
            }
        }
        switch mode {
        case .healthcheck: return .healthcheck(configuration)
        case .checkConfig: return .checkConfig(configuration)
        case .serve:
            if configuration.apiKey.isEmpty && !configuration.sandbox {
                throw ConfigurationError(
                    "no amodb API key: set AMODB_KEY (or AMODB_KEY_FILE), or try the proxy offline with --sandbox",
                    setting: "AMODB_KEY")
            }
            return .serve(configuration)
        }
    }

    /// Gives `rediss://` its files and checks them now (libssl loads, each file loads, the
    /// key matches its certificate), so that a bad path stops the proxy at start rather
    /// than becoming an outage; files with a plain `redis://` URL are a mistake, refused.
    private static func applyRedisTLS(to configuration: inout ProxyConfiguration) throws(ConfigurationError) {
        let files = configuration.redisTLS
        guard files != RedisTLSFiles() else { return }
        let setting = files.caFile != nil ? "AMODB_REDIS_CA_FILE" : "AMODB_REDIS_CERT_FILE"
        guard var redis = configuration.redis, redis.endpoint.usesTLS else {
            throw ConfigurationError(
                "\(setting) is set, but AMODB_REDIS_URL is not a rediss:// URL: TLS files need rediss://",
                setting: setting)
        }
        redis.tls = files
        do throws(RedisTLSError) {
            try redis.checkTLS()
        } catch {
            throw ConfigurationError("\(setting): \(error.reason)", setting: setting)
        }
        configuration.redis = redis
    }

    /// Puts Redis Sentinel in the Redis configuration: both the sentinels and the master's
    /// name, or neither. `AMODB_REDIS_URL` is then optional: its credentials, database and
    /// scheme are used, its host and port are replaced by the master's the sentinels name.
    private static func applyRedisSentinels(to configuration: inout ProxyConfiguration) throws(ConfigurationError) {
        let list = configuration.redisSentinelList
        let master = configuration.redisMaster
        guard !list.isEmpty || !master.isEmpty else { return }
        guard !list.isEmpty, !master.isEmpty else {
            let missing = list.isEmpty ? "AMODB_REDIS_SENTINELS" : "AMODB_REDIS_MASTER"
            throw ConfigurationError(
                "\(missing) is required with \(list.isEmpty ? "AMODB_REDIS_MASTER" : "AMODB_REDIS_SENTINELS"): Sentinel needs the sentinels and the master's name",
                setting: missing)
        }
        var redis = configuration.redis ?? RedisConfiguration(endpoint: RedisEndpoint(host: master))
        do throws(RedisURLError) {
            redis.sentinels = try RedisSentinels(
                list: list, masterName: master, password: configuration.redisSentinelPassword)
        } catch {
            throw ConfigurationError("AMODB_REDIS_SENTINELS: \(error.reason)", setting: "AMODB_REDIS_SENTINELS")
        }
        configuration.redis = redis
    }

    /// Applies one setting; whatever its parser throws names that setting.
    private static func apply(_ setting: Setting, _ value: String, to configuration: inout ProxyConfiguration)
        throws(ConfigurationError)
    {
        do {
            try setting.apply(&configuration, value)
        } catch {
            throw ConfigurationError(error.description, setting: error.setting ?? setting.variable)
        }
    }

    /// Every key file the settings name (environment, flags, the settings file), for redaction.
    private static func keyFilePaths(arguments: [String], environment: [String: String]) -> [String] {
        var paths = [environment["AMODB_KEY_FILE"], environment["AMODB_JWT_SECRET_FILE"]].compactMap { $0 }
        for (index, argument) in arguments.enumerated() {
            for flag in ["--key-file", "--jwt-secret-file"] {
                if argument == flag, index + 1 < arguments.count { paths.append(arguments[index + 1]) }
                if argument.hasPrefix(flag + "=") { paths.append(String(argument.dropFirst(flag.count + 1))) }
            }
        }
        let file =
            arguments.firstIndex(of: "--config").flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
            ?? arguments.first { $0.hasPrefix("--config=") }.map { String($0.dropFirst("--config=".count)) }
            ?? environment["AMODB_CONFIG"] ?? defaultConfigPath
        if let data = readFile(file), let pairs = try? parseFile(String(decoding: data, as: UTF8.self), path: file) {
            paths += pairs.filter { $0.0 == "AMODB_KEY_FILE" || $0.0 == "AMODB_JWT_SECRET_FILE" }.map(\.1)
        }
        return paths
    }

    /// The amodb key from a setting or a file: without a byte order mark and surrounding
    /// white space; refused with a control character inside (a CR, LF or NUL would make
    /// the `Authorization` field unsendable, and the proxy would call amodb without one).
    /// The error never shows the key.
    static func apiKey(_ text: String, _ name: String) throws(ConfigurationError) -> Secret {
        let key = text.trimmingByteOrderMark().trimmingSpacesAndNewlines()
        if let bad = key.unicodeScalars.first(where: { $0.properties.generalCategory == .control }) {
            let what =
                switch bad.value {
                case 0x0D: "a carriage return (CR)"
                case 0x0A: "a line feed (LF)"
                case 0x00: "a NUL byte"
                default: "a control character (U+\(String(bad.value, radix: 16, uppercase: true)))"
                }
            throw ConfigurationError(
                "\(name) holds a key with \(what) inside it; a key is one line of printable characters (the key is not shown)"
            )
        }
        return Secret(String(key))
    }

    /// The HS256 secret of users' ID tokens, as `apiKey` reads a key, and at least 32 bytes
    /// (RFC 7518 §3.2: a key as long as the hash). The error never shows the secret.
    static func jwtSecret(_ text: String, _ name: String) throws(ConfigurationError) -> Secret? {
        let secret = try apiKey(text, name)
        if secret.isEmpty { return nil }
        guard secret.revealed.utf8.count >= 32 else {
            throw ConfigurationError(
                "\(name) holds a secret of \(secret.revealed.utf8.count) bytes; an HS256 secret needs at least 32 (the secret is not shown)"
            )
        }
        return secret
    }

    /// Whether a URL's authority (between `//` and the path) holds a user name or password.
    static func hasCredentials(_ url: String) -> Bool {
        guard let start = url.range(of: "//") else { return url.contains("@") }
        let authority = url[start.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        return authority.contains("@")
    }

    /// A comma-separated list, each item trimmed, empty items dropped.
    private static func list(_ text: String) -> [String] {
        text.split(separator: ",").map { String($0.trimmingSpacesAndNewlines()) }.filter { !$0.isEmpty }
    }

    /// A whole file's bytes, or `nil` if it cannot be read (also works for `/dev/null` and pipes).
    private static func readFile(_ path: String) -> Data? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        return try? handle.readToEnd() ?? Data()
    }

    /// `NAME=value` lines; `#` starts a comment line; quotes around the value are dropped.
    static func parseFile(_ text: String, path: String) throws(ConfigurationError) -> [(String, String)] {
        var pairs: [(String, String)] = []
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingSpacesAndNewlines()
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let equals = line.firstIndex(of: "=") else {
                throw ConfigurationError("\(shown(path)):\(number + 1): expected NAME=value", setting: "AMODB_CONFIG")
            }
            let name = String(line[..<equals].trimmingSpacesAndNewlines())
            var value = line[line.index(after: equals)...].trimmingSpacesAndNewlines()
            if value.count >= 2, let first = value.first, first == "\"" || first == "'", value.last == first {
                value = value.dropFirst().dropLast()
            }
            pairs.append((name, String(value)))
        }
        return pairs
    }

    private static func networks(_ text: String, _ name: String) throws(ConfigurationError) -> [String] {
        let networks = text.split(separator: ",").map { String($0.trimmingSpacesAndNewlines()) }.filter { !$0.isEmpty }
        for network in networks where TrustedProxies.Network(network) == nil {
            throw ConfigurationError(
                "\(name) must list IP addresses or CIDR ranges such as 10.0.0.0/8, not \(shown(network))")
        }
        return networks
    }

    private static func integer(_ text: String, _ name: String, _ range: ClosedRange<Int>) throws(ConfigurationError)
        -> Int
    {
        guard let value = Int(text.trimmingSpacesAndNewlines()), range.contains(value) else {
            throw ConfigurationError(
                "\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), not \(shown(text))")
        }
        return value
    }

    /// An hour, a day and a year in seconds: the upper ends of the duration settings. A
    /// duration beyond its range is a typo, and some would overflow where they are used
    /// (`1e19` seconds is no `Int`, `1e300` no deadline FoundationNetworking can hold).
    private static let hour: Double = 3600, day: Double = 86_400, year: Double = 365 * 86_400

    private static func seconds(_ text: String, _ name: String, _ range: ClosedRange<Double>) throws(ConfigurationError)
        -> Double
    {
        guard let value = Double(text.trimmingSpacesAndNewlines()), value.isFinite, range.contains(value) else {
            throw ConfigurationError(
                "\(name) must be a number of seconds from \(format(range.lowerBound)) to \(format(range.upperBound)), not \(shown(text))"
            )
        }
        return value
    }

    /// A value as quoted in an error: on one line (control characters escaped) and at most
    /// 80 characters, so a bad value cannot garble or flood the message.
    static func shown(_ value: String) -> String {
        var text = ""
        for scalar in value.unicodeScalars.prefix(80) {
            text += scalar.properties.generalCategory == .control ? scalar.escaped(asASCII: true) : String(scalar)
        }
        return value.unicodeScalars.count > 80 ? text + "…" : text
    }

    /// The effective configuration as `NAME=value` lines (a valid settings file), with
    /// every secret redacted: what `--check-config` prints.
    public static func describe(_ configuration: ProxyConfiguration) -> String {
        var text = "# amodb-proxy \(version): effective configuration (secrets redacted)\n"
        if configuration.sandbox {
            text += "# sandbox mode: the built-in amodb stand-in replaces AMODB_UPSTREAM_URL and AMODB_KEY\n"
        }
        for setting in settings {
            let value = setting.show(configuration)
            text += value.isEmpty ? "# \(setting.variable) is not set\n" : "\(setting.variable)=\(value)\n"
        }
        return text
    }

    private static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }
}
