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
    /// `clock`: every replica's (a test moves a `ManualClock` past an outage's closed window).
    init(
        _ count: Int, redis: RedisConfiguration, upstream: ScriptedUpstream, prefix: String = "amodb-proxy:",
        clock: any ProxyClock = SystemClock(), adjust: (inout ProxyConfiguration) -> Void = { _ in }
    ) throws {
        self.upstream = upstream
        var replicas: [ProxyHarness] = []
        var logs: [LogCapture] = []
        for _ in 0..<count {
            var configuration = ProxyHarness.configuration()
            configuration.redis = redis
            configuration.redisPrefix = prefix
            configuration.clientUpstreamShare = 1  // every request comes from 127.0.0.1
            adjust(&configuration)
            let log = LogCapture()
            logs.append(log)
            replicas.append(
                try ProxyHarness(
                    configuration: configuration, fetcher: upstream, clock: clock,
                    logger: ProxyLogger(minimumLevel: .info, secrets: [], sink: log.sink)))
        }
        self.replicas = replicas
        self.logs = logs
    }

    /// Replica `index`.
    subscript(index: Int) -> ProxyHarness { replicas[index] }

    /// Requests every replica has counted as misses (led, joined or refused).
    var misses: Int { replicas.reduce(0) { $0 + $1.proxy.statistics.value(.miss) } }

    /// Whether every replica sees all of them alive and Redis up.
    func allSeeEachOther() async -> Bool {
        for replica in replicas {
            guard let samples = try? await replica.metrics(),
                (try? samples.value("amodb_proxy_replicas")) == Double(replicas.count),
                (try? samples.value("amodb_proxy_redis_up")) == 1
            else { return false }
        }
        return true
    }

    /// Stops every replica (each removes its heartbeat and closes its Redis connections).
    func shutdown() async {
        for replica in replicas { await replica.shutdown() }
    }
}

/// How the replicas reach their Redis: the fleet's tests that prove one cache, one budget
/// and one call per path run over both, the replicas' settings differing only in the URL
/// (`rediss://`) and the test CA they trust.
enum RedisTransport: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case plain, tls

    /// Certificates for the TLS runs, made once for the whole target.
    static let certificates = Task { try await TestCertificates() }

    /// The server's TLS settings for this transport (`nil`: plain text).
    func serverTLS() async throws -> RedisServerTLS? {
        switch self {
        case .plain: nil
        case .tls: RedisServerTLS(try await Self.certificates.value)
        }
    }

    var testDescription: String { rawValue }
}

/// Runs `body` with a fresh redis-server and `count` replicas over it and `upstream`.
func withFleet(
    _ count: Int,
    upstream: ScriptedUpstream = ScriptedUpstream(
        fallback: .response(UpstreamResponse(status: 200, body: Array(ScriptedUpstream.movieDetails.utf8)))),
    password: String? = nil, transport: RedisTransport = .plain, clock: any ProxyClock = SystemClock(),
    adjust: @escaping (inout ProxyConfiguration) -> Void = { _ in },
    _ body: (Fleet, RedisServer) async throws -> Void
) async throws {
    try await withRedisServer(password: password, tls: try await transport.serverTLS()) { server in
        try await withServer(
            try Fleet(count, redis: server.configuration(), upstream: upstream, clock: clock, adjust: adjust)
        ) {
            fleet in
            try await body(fleet, server)
        }
    }
}
