package import AmodbHTTP
package import AmodbModels
package import AmodbRedis

/// Everything the proxy can be told, with every default in one place.
/// Loaded by `ConfigurationLoader`: defaults, then the file, the environment, the flags.
package struct ProxyConfiguration: Sendable {
    /// The amodb key (`AMODB_KEY`, or read from `AMODB_KEY_FILE`).
    package var apiKey = Secret("")
    /// amodb's API root; a path prefix is kept (`http://127.0.0.1:9001/x/3`).
    package var upstreamURL = "https://api.amodb.dev/3"
    /// Address to listen on.
    package var host = "0.0.0.0"
    /// Port to listen on; 0 picks a free one.
    package var port = 8080
    /// The operator's pages' own port (`AMODB_OPERATOR_PORT`); `nil`: they are on `port`.
    package var operatorPort: Int?
    /// The address the operator's port listens on (`AMODB_OPERATOR_HOST`).
    package var operatorHost = "127.0.0.1"
    /// How long a stored trending list is fresh, in seconds (amodb's own edge keeps them 30 minutes).
    package var cacheTTL: Double = 1800
    /// How long stored movie details are fresh, in seconds.
    package var movieTTL: Double = 1800
    /// How long the stored `/configuration` is fresh, in seconds (amodb changes it rarely).
    package var configurationTTL: Double = 86_400
    /// Most body bytes the cache holds.
    package var cacheMaxBytes = 64 * 1024 * 1024
    /// The oldest age at which an answer may still be served stale (while refreshing, or when
    /// amodb fails), in seconds; never less than twice its route's lifetime (`Freshness`), 0: never.
    package var maxStaleSeconds: Double = 24 * 3600
    /// How long amodb's 404 for a path is remembered, in seconds.
    package var negativeTTL: Double = 300
    /// Calls to amodb per sliding minute at most, refreshes and retries included.
    package var rateLimit = 40
    /// The languages amodb translates; any other `language` shares the `en-US` entry.
    package var languages = AmodbLanguage.base
    /// Where the cache is saved on shutdown and periodically, and loaded from at start; `nil`: off.
    package var snapshotPath: String?
    /// How often the snapshot is written, in seconds.
    package var snapshotIntervalSeconds: Double = 300
    /// How long a miss waits for a call once the window is spent, before its 503, in seconds (0: no wait).
    package var missWait: Double = 2
    /// Each client's share of the window's amodb calls for misses (a fraction, 0 < share ≤ 1; 1: no share limit).
    package var clientUpstreamShare = 0.125
    /// The routes served beyond those `RouteTable` serves by default, turned on by name.
    package var extraRoutes: [Route.Kind] = []
    /// Each client's share of the window's calls for misses of a miss-only route (a search),
    /// on top of its client share (a fraction, 0 < share ≤ 1; 1: none but the client share).
    package var searchShare = 0.05

    /// The routes this proxy serves: the table's defaults and those turned on.
    package var servedRoutes: ServedRoutes { ServedRoutes(RouteTable.servedByDefault.union(extraRoutes)) }
    /// How long to wait for amodb, in seconds: a deadline for the whole call, last byte included.
    package var upstreamTimeout: Double = 10
    /// The largest amodb body accepted, in bytes after decoding; a larger one is cut off (502, not stored).
    package var maxUpstreamBytes = URLSessionUpstreamFetcher.defaultMaxBytes
    /// The longest amodb `Retry-After` the proxy waits out before retrying, in seconds.
    package var retryAfterCap: Double = 30
    /// How long in-flight requests may take to finish on SIGTERM, in seconds.
    package var shutdownGraceSeconds: Double = 10
    /// `debug`, `info`, `warning` or `error`.
    package var logLevel = ProxyLogger.Level.info
    /// Per-connection limits (request line, headers, body, pipelining, connection cap).
    package var limits = HTTPLimits()
    /// Per-connection deadlines (request head, idle keep-alive, writes).
    package var timeouts = HTTPTimeouts()
    /// Tokens an app's users must present as `Authorization: Bearer <token>`; none: open.
    package var clientTokens: [Secret] = []
    /// A file of tokens, one per line, read again when it changes (rotation).
    package var clientTokensFile: String?
    /// The HS256 secret users' ID tokens are signed with (`AMODB_JWT_SECRET`, at least 32 bytes); `nil`: none.
    package var jwtSecret: Secret?
    /// The JSON Web Key Set whose RS256 and ES256 keys sign users' ID tokens; `nil`: none.
    package var jwksURL: String?
    /// Accepted `iss` values of users' ID tokens (required with a secret or a key set).
    package var jwtIssuers: [String] = []
    /// Accepted `aud` values of users' ID tokens (required with a secret or a key set).
    package var jwtAudiences: [String] = []
    /// Clock skew allowed on a user token's `exp`, `nbf` and `iat`, in seconds.
    package var jwtLeeway: Double = 60
    /// How often the key set is fetched again, in seconds (besides an unknown `kid`'s fetch).
    package var jwksRefreshSeconds: Double = 3600
    /// Whether users' ID tokens are verified (a secret or a key set is set).
    package var verifiesUserTokens: Bool { jwtSecret != nil || jwksURL != nil }
    /// Requests a minute per client (token, or address without tokens), on average; 0: no limit.
    package var clientRateLimit = 600
    /// Requests a client may make at once before the per-minute rate applies.
    package var clientBurst = 120
    /// Client addresses (or CIDR ranges) not limited per address: loopback by default.
    package var rateLimitExempt = ["127.0.0.0/8", "::1"]
    /// The leading bits of an IPv6 client address that name the client (`AMODB_IPV6_PREFIX`):
    /// every address of one /64 is one client for the per-address limits.
    package var ipv6Prefix = ClientNetwork.defaultPrefix
    /// Peers (addresses or CIDR ranges) whose `X-Forwarded-For` names the client.
    package var trustedProxies: [String] = []
    /// Origins web apps may call from (`https://app.example.com`, or `*`); none: no CORS.
    package var corsOrigins: [String] = []
    /// One line per request on standard output.
    package var accessLog = true
    /// `json` or `text`, for the access log and the event log.
    package var logFormat = LogFormat.json
    /// Run against the built-in amodb stand-in (no key, no network needed).
    package var sandbox = false
    /// The Redis that replicas share (`AMODB_REDIS_URL`, with the client's default timeouts:
    /// tens of milliseconds per command); `nil`: no sharing, this replica alone.
    package var redis: RedisConfiguration?
    /// The Redis settings that only say how to find and reach it (Sentinel, TLS files,
    /// cluster mode), as given: the loader puts them into `redis`, and nothing else reads them.
    package var redisParts = RedisParts()
    /// What every key this deployment writes in Redis starts with (`AMODB_REDIS_PREFIX`);
    /// under Redis Cluster, in braces (the keys' one hash tag).
    package var redisPrefix = "amodb-proxy:"
    /// The most replicas that share the Redis (`AMODB_FLEET_SIZE`): the outage reserve is
    /// divided among this many; 1: a lone replica, whose budget needs no Redis.
    package var fleetSize = 8
    /// Calls a window the fleet's window never grants, kept for replicas that cannot use it
    /// (`AMODB_BUDGET_RESERVE`): each replica spends `budgetReserve / fleetSize` of them on
    /// its own. `nil`: a fifth of `rateLimit`.
    package var budgetReserve: Int?
    /// Where what must survive a restart is kept (`AMODB_STATE_DIR`): the calls to amodb of
    /// the last minute (`CallLedger`). `nil`: memory only (a restart forgets them).
    package var stateDirectory: String?
    /// Whether `stateDirectory` is the loader's default rather than the operator's choice:
    /// a default that cannot be used is warned of, a chosen one stops the proxy.
    package var stateDirectoryIsDefault = false

    /// What an API request must prove (`AMODB_PROOF`).
    package var proof = ProofPolicy.none
    /// Refuse what lacks the proof, or serve it and count it (`AMODB_PROOF_MODE`).
    package var proofMode = ProofMode.enforce
    /// The apps whose App Attest keys are accepted, `TEAMID.bundle.id` (`AMODB_ATTEST_APPS`); empty: off.
    package var attestApps: [String] = []
    /// Whether development builds' App Attest keys are accepted (`AMODB_ATTEST_ALLOW_DEVELOPMENT`).
    package var attestAllowDevelopment = false
    /// A PEM root trusted instead of Apple's (`AMODB_ATTEST_ROOT_FILE`): tests only.
    package var attestRootFile: String?
    /// How long a session token is good (`AMODB_ATTEST_SESSION_SECONDS`).
    package var attestSessionSeconds: Double = 3600
    /// Session token secrets, the first signing (`AMODB_ATTEST_SESSION_SECRETS`); empty:
    /// derived from the amodb key.
    package var attestSessionSecrets: [Secret] = []
    /// The Firebase project number whose App Check tokens are accepted (`AMODB_APP_CHECK_PROJECT`); empty: off.
    package var appCheckProject = ""
    /// The Firebase app ids accepted as an App Check token's `sub` (`AMODB_APP_CHECK_APPS`).
    package var appCheckApps: [String] = []
    /// Firebase App Check's key set (`AMODB_APP_CHECK_JWKS_URL`).
    package var appCheckJWKSURL = "https://firebaseappcheck.googleapis.com/v1/jwks"

    package init() {}

    /// Every default, for code that needs one default without a configuration at hand:
    /// the values above are written nowhere else.
    package static let defaults = ProxyConfiguration()
}

/// The Redis settings that say how to find and reach it, as given, before the loader puts
/// them into `ProxyConfiguration.redis` (and checks them together).
package struct RedisParts: Sendable, Equatable {
    /// The sentinels (`AMODB_REDIS_SENTINELS`), as given.
    package var sentinelList = ""
    /// The master's name the sentinels know (`AMODB_REDIS_MASTER`).
    package var master = ""
    /// The sentinels' own password (`AMODB_REDIS_SENTINEL_PASSWORD`); `nil`: none.
    package var sentinelPassword: RedisPassword?
    /// Files for `rediss://` (`AMODB_REDIS_CA_FILE`, `AMODB_REDIS_CERT_FILE`, `AMODB_REDIS_KEY_FILE`).
    package var tls = RedisTLSFiles()
    /// Whether the Redis is a cluster (`AMODB_REDIS_CLUSTER`).
    package var cluster = false

    package init() {}
}
