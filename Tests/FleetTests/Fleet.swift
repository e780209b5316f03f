import AmodbModels
import AmodbProxy
import AmodbRedis
import AmodbRedisTestSupport
import AmodbTestSupport
import Testing

/// Replicas for a test: in-process proxies on port 0 over one scripted upstream (the
/// amodb they share) and one Redis, each with its own captured log.
final class Fleet: ScopedServer {
    /// The replicas, each on its own port.
    let replicas: [ProxyHarness]
    /// Each replica's event log, in the same order.
    let logs: [LogCapture]
    /// The amodb they share.
    let upstream: ScriptedUpstream

    /// Starts `count` replicas sharing `redis` under `prefix`; `adjust` may change each one's configuration.
    /// `clock`: every replica's (a test moves a `ManualClock` past a reserve's window).
    convenience init(
        _ count: Int, redis: RedisConfiguration, upstream: ScriptedUpstream, prefix: String = "amodb-proxy:",
        clock: any ProxyClock = SystemClock(), adjust: (inout ProxyConfiguration) -> Void = { _ in }
    ) throws {
        try self.init(
            count, redisOf: { _ in redis }, upstream: upstream, prefix: prefix, clockOf: { _ in clock }, adjust: adjust)
    }

    /// Starts `count` replicas, replica `index` reaching Redis by `redisOf(index)` (its own
    /// link, which a test may cut) and reading `clockOf(index)` (a clock set ahead).
    init(
        _ count: Int, redisOf: (Int) -> RedisConfiguration, upstream: ScriptedUpstream,
        prefix: String = "amodb-proxy:", clockOf: (Int) -> any ProxyClock,
        adjust: (inout ProxyConfiguration) -> Void = { _ in }
    ) throws {
        self.upstream = upstream
        var replicas: [ProxyHarness] = []
        var logs: [LogCapture] = []
        for index in 0..<count {
            var configuration = ProxyHarness.configuration()
            configuration.redis = redisOf(index)
            configuration.redisPrefix = prefix
            configuration.clientUpstreamShare = 1  // every request comes from 127.0.0.1
            adjust(&configuration)
            let log = LogCapture()
            logs.append(log)
            replicas.append(
                try ProxyHarness(
                    .live, configuration: configuration, fetcher: upstream, clock: clockOf(index),
                    logger: ProxyLogger(minimumLevel: .info, secrets: [], sink: log.sink)))
        }
        self.replicas = replicas
        self.logs = logs
    }

    /// Replica `index`.
    subscript(index: Int) -> ProxyHarness { replicas[index] }

    /// Requests every replica has counted as misses (led, joined or refused).
    var misses: Int { replicas.reduce(0) { $0 + $1.proxy.statistics.value(.miss) } }

    /// Whether every replica sees all of them alive and Redis up, and the fleet's window
    /// grants (a new fleet's settles for a moment first).
    /// `settled: false`: whether or not the window grants (one lost pauses for a minute).
    func allSeeEachOther(settled: Bool = true) async -> Bool {
        await sightings().allSatisfy {
            $0.replicas == Double(replicas.count) && $0.redisUp == 1 && (!settled || $0.paused == 0)
        }
    }

    /// Waits until every replica sees all of them alive and Redis up; records what each saw
    /// last when they do not within `seconds`. The wait is long because a green run must not
    /// depend on how busy the machine is (the whole suite shares two cores); it costs
    /// nothing once they see each other.
    func seeEachOther(
        within seconds: Double = 30, settled: Bool = true, sourceLocation: SourceLocation = #_sourceLocation
    ) async -> Bool {
        if await eventually(within: seconds, { await allSeeEachOther(settled: settled) }) { return true }
        let seen = await sightings().enumerated().map { index, sighting in
            "replica \(index): replicas \(sighting.replicas.map { "\($0)" } ?? "no answer"), "
                + "redis up \(sighting.redisUp.map { "\($0)" } ?? "no answer"), "
                + "budget paused \(sighting.paused.map { "\($0)" } ?? "no answer")"
        }
        Issue.record(
            "the replicas did not all see each other within \(seconds) s: \(seen)", sourceLocation: sourceLocation)
        return false
    }

    /// What each replica's `/metrics` says of the fleet (`nil`: no answer).
    private func sightings() async -> [(replicas: Double?, redisUp: Double?, paused: Double?)] {
        var seen: [(replicas: Double?, redisUp: Double?, paused: Double?)] = []
        for replica in replicas {
            let samples = try? await replica.metrics()
            let paused = samples.map { samples in
                PauseReason.allCases.reduce(0.0) {
                    $0 + ((try? samples.value("amodb_proxy_budget_paused", ["reason": $1.rawValue])) ?? 0)
                }
            }
            seen.append(
                (
                    samples.flatMap { try? $0.value("amodb_proxy_replicas") },
                    samples.flatMap { try? $0.value("amodb_proxy_redis_up") }, paused
                ))
        }
        return seen
    }

    /// Stops every replica (each removes its heartbeat and closes its Redis connections).
    func shutdown() async {
        for replica in replicas { await replica.shutdown() }
    }
}

/// How the replicas reach their Redis: the fleet's tests that prove one cache, one budget
/// and one call per path run over each, the replicas' settings differing only in the URL
/// (`rediss://`) and the test CA they trust, or in cluster mode (a cluster of three
/// masters with a replica each, reached from a node that does not serve the proxy's slot).
enum RedisTransport: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case plain, tls, cluster

    /// The transports this machine can run (a cluster also needs `redis-cli`).
    static var available: [RedisTransport] {
        allCases.filter { $0 != .cluster || RedisCluster.isInstalled }
    }

    /// Certificates for the TLS runs, made once for the whole target.
    static let certificates = Task { try await TestCertificates() }

    /// The server's TLS settings for this transport (`nil`: plain text).
    func serverTLS() async throws -> RedisServerTLS? {
        switch self {
        case .plain, .cluster: nil
        case .tls: RedisServerTLS(try await Self.certificates.value)
        }
    }

    /// What the fleet's keys start with under the default prefix: in braces on a cluster.
    var keyPrefix: String { self == .cluster ? "{amodb-proxy:}" : "amodb-proxy:" }

    var testDescription: String { rawValue }
}

/// Runs `body` with a fresh redis-server (or cluster) and `count` replicas over it and
/// `upstream`, once they see each other and the fleet's new window has settled
/// (`seeEachOther`); `body` gets the server, on a cluster the master of the proxy's slot.
func withFleet(
    _ count: Int,
    upstream: ScriptedUpstream = ScriptedUpstream(
        fallback: .response(UpstreamResponse(status: 200, body: Array(ScriptedUpstream.movieDetails.utf8)))),
    password: String? = nil, transport: RedisTransport = .plain, clock: any ProxyClock = SystemClock(),
    adjust: @escaping (inout ProxyConfiguration) -> Void = { _ in },
    _ body: (Fleet, RedisServer) async throws -> Void
) async throws {
    if transport == .cluster {
        return try await withClusterFleet(count, upstream: upstream, password: password, clock: clock, adjust: adjust) {
            fleet, cluster in
            // The server a test reads the fleet's keys from: the slot's master.
            try await body(fleet, try await cluster.master(ofSlot: clusterMode.slot))
        }
    }
    try await withRedisServer(password: password, tls: try await transport.serverTLS()) { server in
        try await withServer(
            try Fleet(count, redis: server.configuration(), upstream: upstream, clock: clock, adjust: adjust)
        ) {
            fleet in
            #expect(await fleet.seeEachOther())
            try await body(fleet, server)
        }
    }
}

/// Cluster mode for the fleet's default prefix.
let clusterMode = RedisClusterMode(hashTag: "amodb-proxy:")!

/// Runs `body` with a fresh Redis Cluster (three masters with a replica each) and `count`
/// replicas in cluster mode over it and `upstream`, once they see each other; the replicas
/// start from a node that does not serve the proxy's slot.
func withClusterFleet(
    _ count: Int,
    upstream: ScriptedUpstream = ScriptedUpstream(
        fallback: .response(UpstreamResponse(status: 200, body: Array(ScriptedUpstream.movieDetails.utf8)))),
    password: String? = nil, clock: any ProxyClock = SystemClock(),
    adjust: @escaping (inout ProxyConfiguration) -> Void = { _ in },
    _ body: (Fleet, RedisCluster) async throws -> Void
) async throws {
    try await withRedisCluster(password: password) { cluster in
        let owner = try await cluster.master(ofSlot: clusterMode.slot)
        var redis = try #require(cluster.nodes.first { $0.port != owner.port }).configuration()
        redis.cluster = clusterMode
        try await withServer(try Fleet(count, redis: redis, upstream: upstream, clock: clock, adjust: adjust)) {
            fleet in
            #expect(await fleet.seeEachOther())
            try await body(fleet, cluster)
        }
    }
}
