import AmodbAttest
import AmodbCrypto
package import AmodbHTTP
import Dispatch
import Foundation
import Synchronization

/// The proxy, assembled: the HTTP server, the routes, the cache, the budget and the
/// upstream fetcher. Tests start it in-process on port 0; `amodb-proxy` starts it from
/// its configuration.
package final class ProxyServer: Sendable {
    package let configuration: ProxyConfiguration
    /// The cache in use (its `usage` is visible to operators and tests).
    package let cache: any ResponseCache
    /// The upstream budget (calls used in the current window): in memory, or shared
    /// through Redis by every replica when `AMODB_REDIS_URL` is set.
    let budget: any CallBudget
    /// The link to the Redis replicas share (`AMODB_REDIS_URL`); `nil`: this replica alone.
    let redis: RedisLink?
    /// What the cache did: hits, stale answers, refreshes, budget denials.
    package let statistics: CacheStatistics
    /// What `/metrics` reports.
    package let metrics: ProxyMetrics
    /// The client tokens in force (re-read from their file when it changes).
    package let tokens: AppTokens
    /// The identity provider's key set users' ID tokens are verified with (`AMODB_JWT_JWKS_URL`).
    let keySet: KeySetRefresher?
    /// Firebase App Check's key set, when App Check is on.
    let appCheckKeySet: KeySetRefresher?
    /// The one way through the proxy: what answers every request, from a connection or
    /// handed straight to it (`ProxyHarness`).
    package let driver: ProxyDriver
    private let stages: CacheStages
    /// The HTTP server the driver answers on (its connections, its counts).
    package let server: HTTPServer
    /// The operator's pages' own listener (`AMODB_OPERATOR_PORT`), if they have one.
    package let operatorServer: HTTPServer?
    private let boundOperatorPort = Atomic<Int>(0)
    private let logger: ProxyLogger
    private let clock: any ProxyClock
    private let snapshot: CacheSnapshot?
    private let validator: AnswerValidator
    private let timers = Mutex<[Timer]>([])

    /// Dispatch sources are thread-safe; the overlay just does not mark them `Sendable`.
    private struct Timer: @unchecked Sendable {
        let source: any DispatchSourceTimer
    }

    /// Builds the proxy. `fetcher`, `cache` and `clock` default to the real ones; the
    /// access log goes to standard output unless `accessLogSink` says otherwise; the calls to
    /// amodb are written to `ledger` (`AMODB_STATE_DIR`), when given, and read back from it.
    package init(
        configuration: ProxyConfiguration, fetcher: (any UpstreamFetcher)? = nil, cache: (any ResponseCache)? = nil,
        clock: any ProxyClock = SystemClock(), logger: ProxyLogger? = nil, accessLogSink: ProxyLogger.Sink? = nil,
        ledger: CallLedger? = nil
    ) {
        // The loader refuses a configuration whose settings disagree, naming the setting; one
        // built in code that does is a programmer's error, stopped here as loudly.
        do throws(ConfigurationError) {
            self.configuration = try configuration.validated()
        } catch {
            preconditionFailure("the proxy's configuration: \(error.description)")
        }
        let logger =
            logger
            ?? ProxyLogger(
                minimumLevel: configuration.logLevel, format: configuration.logFormat,
                secrets: [configuration.apiKey] + [configuration.jwtSecret].compactMap { $0 })
        self.logger = logger
        self.clock = clock
        let cache = cache ?? MemoryResponseCache(maxBytes: configuration.cacheMaxBytes)
        self.cache = cache
        let redis = configuration.redis.map {
            RedisLink(
                configuration: $0, prefix: configuration.redisPrefix, logger: logger,
                largestBody: configuration.maxUpstreamBytes, clock: clock)
        }
        self.redis = redis
        self.budget = CallWindow.of(configuration, redis: redis, ledger: ledger, clock: clock, logger: logger)
        self.statistics = CacheStatistics()
        let metrics = ProxyMetrics()
        self.metrics = metrics
        let validator = AnswerValidator(
            key: configuration.apiKey, schema: SchemaMismatchReporter(logger: logger, clock: clock, metrics: metrics))
        self.validator = validator
        self.snapshot = configuration.snapshotPath.map(CacheSnapshot.init(path:))
        let fetcher = InstrumentedFetcher(
            inner: fetcher
                ?? URLSessionUpstreamFetcher(
                    baseURL: configuration.upstreamURL, key: configuration.apiKey,
                    timeout: configuration.upstreamTimeout,
                    maxBytes: configuration.maxUpstreamBytes), metrics: metrics)
        let policy = CacheStages.Policy(configuration)
        let bounds = CacheSnapshot.Bounds(configuration)
        let leases = redis.map { link in
            RedisFetchLeases(
                local: MemoryFetchLeases(capacity: policy.maxFetchesInFlight), link: link,
                rules: .init(bounds: bounds, validator: validator, leaseSeconds: configuration.upstreamTimeout + 2),
                clock: clock, logger: logger)
        }
        let tasks = BackgroundTasks(clock: clock)
        let stages = CacheStages(
            cache: cache, fetcher: fetcher, budget: policy.budget(window: budget, clock: clock, tasks: tasks),
            tasks: tasks, clock: clock, logger: logger, policy: policy, validator: validator, statistics: statistics,
            leases: leases)
        self.stages = stages
        let tokens = AppTokens(
            tokens: configuration.clientTokens, file: configuration.clientTokensFile, amodbKey: configuration.apiKey,
            logger: logger)
        self.tokens = tokens
        let keySet = configuration.jwksURL.flatMap(URL.init(string:)).map { url in
            KeySetRefresher(
                url: url, timeout: configuration.upstreamTimeout, maxBytes: configuration.maxUpstreamBytes,
                refreshSeconds: configuration.jwksRefreshSeconds, clock: clock, logger: logger)
        }
        self.keySet = keySet
        let users =
            configuration.verifiesUserTokens
            ? TokenVerifier(
                secret: configuration.jwtSecret, keySet: keySet,
                rules: .init(
                    issuers: Set(configuration.jwtIssuers), audiences: Set(configuration.jwtAudiences),
                    leeway: configuration.jwtLeeway),
                identifier: TokenIdentifier(amodbKey: configuration.apiKey))
            : nil
        let cors =
            configuration.corsOrigins.isEmpty
            ? nil : CORSPolicy(origins: Set(configuration.corsOrigins), logger: logger)
        let rateLimiter =
            configuration.clientRateLimit > 0
            ? CallerRateLimiter(perMinute: configuration.clientRateLimit, burst: configuration.clientBurst) : nil
        let proofs = Self.proofs(configuration, clock: clock, logger: logger)
        appCheckKeySet = proofs?.appCheckKeySet
        var callers = Callers(tokens: tokens, users: users, keySet: keySet, rateLimiter: rateLimiter, metrics: metrics)
        callers.proofs = proofs
        let attest = proofs?.sessions.flatMap { sessions in
            Self.attestService(
                configuration, sessions: sessions, redis: redis, rateLimiter: rateLimiter, clock: clock,
                metrics: metrics,
                logger: logger)
        }
        let access = ProxyDriver.Access(
            callers: callers,
            rateLimiter: rateLimiter,
            trustedProxies: TrustedProxies(
                networks: configuration.trustedProxies.compactMap(TrustedProxies.Network.init)),
            rateLimitExempt: AddressSet(
                networks: configuration.rateLimitExempt.compactMap(TrustedProxies.Network.init)),
            cors: cors, routes: configuration.servedRoutes,
            network: ClientNetwork(ipv6Prefix: configuration.ipv6Prefix),
            operatorPages: ProxyDriver.OperatorPages(ownPort: configuration.operatorPort != nil))
        let accessLog =
            configuration.accessLog
            ? AccessLog(format: configuration.logFormat, sink: accessLogSink, logger: logger)
            : nil
        driver = ProxyDriver(
            stages: stages, access: access, languages: configuration.languages, metrics: metrics,
            accessLog: accessLog, redis: redis, attest: attest)
        server = HTTPServer(
            configuration: .init(
                host: configuration.host, port: configuration.port, limits: configuration.limits,
                timeouts: configuration.timeouts,
                errorResponse: { status, message in
                    var response = APIRefusal(.unreadableRequest, status: status, message).response
                    cors?.decorateRefusal(&response)
                    return response
                }, queueLabel: "amodb-proxy"),
            responder: driver)
        operatorServer = configuration.operatorPort.map { [driver] port in
            HTTPServer(
                configuration: .init(
                    host: configuration.operatorHost, port: port, limits: configuration.limits,
                    timeouts: configuration.timeouts,
                    errorResponse: { status, message in APIRefusal(.unreadableRequest, status: status, message).response
                    },
                    queueLabel: "amodb-proxy.operator"),
                responder: OperatorDoor(driver: driver))
        }
        let server = server
        metrics.connect(
            .init(
                cache: cache, budget: budget, statistics: statistics, clock: clock,
                connections: { server.connectionCount },
                tables: { [stages] in
                    let sizes = stages.tableSizes
                    return [
                        ("in_flight", sizes.inFlight), ("backoff", sizes.backoff), ("client_share", sizes.clients),
                        ("tasks", sizes.tasks),
                    ]
                }, redis: redis, variants: stages.variantMaker, keySet: keySet,
                cacheMaxBytes: configuration.cacheMaxBytes, checksProofs: proofs != nil))
    }

    /// Loads the snapshot (if configured), listens and serves; returns the bound port (the
    /// operator's port, when it has one, is `operatorPort` then).
    package func start() throws(StartError) -> Int {
        prepare()
        let port: Int
        do throws(HTTPServer.StartError) {
            port = try server.start()
        } catch {
            throw .port(error)
        }
        if let operatorServer {
            do throws(HTTPServer.StartError) {
                boundOperatorPort.store(try operatorServer.start(), ordering: .relaxed)
            } catch {
                Task { [server] in await server.shutdown(gracePeriod: 0) }
                throw .operatorPort(error)
            }
        }
        serve()
        return port
    }

    /// Why the proxy could not listen: on its port, or on the operator's.
    package enum StartError: Error, CustomStringConvertible {
        case port(HTTPServer.StartError)
        case operatorPort(HTTPServer.StartError)

        package var description: String {
            switch self {
            case .port(let error): error.description
            case .operatorPort(let error): "AMODB_OPERATOR_PORT: \(error.description)"
            }
        }

        /// Which listener failed: `PORT`'s (and `HOST`'s), or the operator's.
        package var isOperatorPort: Bool {
            if case .operatorPort = self { true } else { false }
        }
    }

    /// The operator's port as bound, once `start()` has listened on it.
    package var operatorPort: Int? {
        let port = boundOperatorPort.load(ordering: .relaxed)
        return port == 0 ? nil : port
    }

    /// Starts everything `start()` does but the listening socket: requests come only
    /// through the driver, as an in-process harness hands them (`ProxyHarness`).
    package func startWithoutListening() {
        prepare()
        serve()
    }

    /// What comes before serving: the snapshot loaded, the links to Redis and the key set started.
    private func prepare() {
        loadSnapshot()
        redis?.start()
        keySet?.start()
        appCheckKeySet?.start()
    }

    /// The proofs of a genuine app the configuration turns on, or `nil` for none.
    private static func proofs(_ configuration: ProxyConfiguration, clock: any ProxyClock, logger: ProxyLogger)
        -> Callers.Proofs?
    {
        let attests = !configuration.attestApps.isEmpty
        let checksApps = !configuration.appCheckProject.isEmpty
        guard attests || checksApps || configuration.proof != .none else { return nil }
        let sessions =
            attests
            ? SessionTokens(
                secrets: configuration.attestSessionSecrets, amodbKey: configuration.apiKey,
                lifetime: configuration.attestSessionSeconds) : nil
        let keySet =
            checksApps
            ? URL(string: configuration.appCheckJWKSURL).map { url in
                KeySetRefresher(
                    url: url, timeout: configuration.upstreamTimeout, maxBytes: configuration.maxUpstreamBytes,
                    refreshSeconds: configuration.jwksRefreshSeconds, clock: clock, logger: logger)
            } : nil
        // Firebase's rules for an App Check token: RS256 from its key set, `typ` JWT, the
        // issuer and audience of the project (by number), and an accepted app as `sub`.
        let appCheck = keySet.map { keySet in
            TokenVerifier(
                secret: nil, keySet: keySet,
                rules: .init(
                    issuers: ["https://firebaseappcheck.googleapis.com/" + configuration.appCheckProject],
                    audiences: ["projects/" + configuration.appCheckProject], leeway: 60,
                    subjects: Set(configuration.appCheckApps), type: "JWT"),
                identifier: TokenIdentifier(amodbKey: configuration.apiKey))
        }
        return Callers.Proofs(
            sessions: sessions, appCheck: appCheck, appCheckKeySet: keySet, policy: configuration.proof,
            mode: configuration.proofMode)
    }

    /// App Attest's exchange: the apps accepted, the root trusted (Apple's, or a file a test
    /// names, loudly), the store (Redis with a fleet, so every replica knows each challenge,
    /// key and counter; memory alone).
    private static func attestService(
        _ configuration: ProxyConfiguration, sessions: SessionTokens, redis: RedisLink?,
        rateLimiter: CallerRateLimiter?, clock: any ProxyClock, metrics: ProxyMetrics, logger: ProxyLogger
    ) -> AttestService? {
        let apps = configuration.attestApps.map { app in
            let parts = app.split(separator: ".", maxSplits: 1).map(String.init)
            return AppID(teamID: parts[0], bundleID: parts.count > 1 ? parts[1] : "")
        }
        var roots = TrustedRoots.appleAppAttestation
        if let file = configuration.attestRootFile {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8),
                let certificates = try? X509Certificate.certificates(pem: text), !certificates.isEmpty
            else {
                logger.error(
                    "AMODB_ATTEST_ROOT_FILE cannot be read as PEM certificates: App Attest is off", ["path": file])
                return nil
            }
            logger.warning(
                "App Attest trusts AMODB_ATTEST_ROOT_FILE instead of Apple's App Attestation Root CA: for tests and private deployments only; real devices' keys are refused",
                ["path": file])
            roots = TrustedRoots(certificates)
        }
        let store: any AttestStore = redis.map { RedisAttestStore(link: $0) } ?? MemoryAttestStore()
        return AttestService(
            verifier: AppAttestVerifier(
                appIDs: apps, allowDevelopment: configuration.attestAllowDevelopment, trustedRoots: roots),
            sessions: sessions, store: store, rateLimiter: rateLimiter, clock: clock, metrics: metrics)
    }

    /// Ready: `/readyz` says so, the periodic work runs.
    private func serve() {
        driver.listening.store(true, ordering: .relaxed)
        // The status page's history: the counters sampled once a second, off the event loops.
        repeatEvery(1) { [weak self] in self?.metrics.sampleStatus() }
        if snapshot != nil {
            repeatEvery(configuration.snapshotIntervalSeconds) { [weak self] in self?.writeSnapshot() }
        }
        if configuration.clientTokensFile != nil {
            repeatEvery(2) { [weak self] in self?.tokens.reloadIfChanged() }
        }
        if !tokens.isEnabled && !configuration.verifiesUserTokens {
            logger.warning(
                "no client tokens are set: anyone who can reach the proxy can use it (set AMODB_PROXY_TOKENS)")
        }
    }

    /// The cache stages' tracked tasks running now (fetches, refreshes, the key probe).
    package var forwarderTasks: Int { stages.tableSizes.tasks }

    /// Stored answers compressed into their variants so far (each once, in every coding).
    package var variantCompressions: Int { stages.variantMaker.compressions }

    /// Open client connections now.
    package var connectionCount: Int { server.connectionCount }

    /// Stops accepting, wakes the forwarder's waits (429 retries, key probes), lets requests
    /// and fetches in flight finish within the grace period, then writes the snapshot (if
    /// configured); nothing is stored after it.
    package func shutdown() async {
        let running = timers.withLock { timers in
            defer { timers = [] }
            return timers
        }
        running.forEach { $0.source.cancel() }
        driver.listening.store(false, ordering: .relaxed)
        let started = ContinuousClock.now
        stages.stopBackgroundWork()
        async let operatorPages: Void? = operatorServer?.shutdown(gracePeriod: 0)
        await server.shutdown(gracePeriod: configuration.shutdownGraceSeconds)
        _ = await operatorPages
        let spent = ContinuousClock.now - started
        let left =
            configuration.shutdownGraceSeconds - Double(spent.components.seconds) - Double(spent.components.attoseconds)
            / 1e18
        await stages.drain(within: max(0, left))
        await keySet?.stop()
        writeSnapshot()
        await redis?.shutdown()
    }

    // MARK: Snapshot

    /// What an entry read from outside the process (snapshot, Redis) must respect.
    private var snapshotBounds: CacheSnapshot.Bounds {
        .init(configuration)
    }

    private func loadSnapshot() {
        guard let snapshot else { return }
        do {
            let loaded = try snapshot.load(now: clock.now(), bounds: snapshotBounds, validator: validator)
            for (key, problem) in loaded.dropped.prefix(10) {
                logger.warning(
                    "cache snapshot entry dropped",
                    ["key": String(key.prefix(256)), "problem": problem, "path": snapshot.path])
            }
            if loaded.dropped.count > 10 {
                logger.warning(
                    "cache snapshot entries dropped",
                    ["more": String(loaded.dropped.count - 10), "path": snapshot.path])
            }
            for (key, entry) in loaded.entries where cache.store(entry, for: key) {
                stages.makeVariants(of: entry, for: key)  // the snapshot keeps identity only: rebuilt here
            }
            if !loaded.entries.isEmpty {
                logger.info("cache snapshot loaded", ["entries": String(loaded.entries.count), "path": snapshot.path])
            }
        } catch {
            logger.warning("cache snapshot ignored: \(error)", ["path": snapshot.path])
        }
    }

    /// Writes the snapshot now (also done periodically and on shutdown).
    package func writeSnapshot() {
        guard let snapshot else { return }
        do {
            let count = try snapshot.write(cache.allEntries(), now: clock.now())
            logger.debug("cache snapshot written", ["entries": String(count), "path": snapshot.path])
        } catch {
            logger.error("cannot write the cache snapshot", ["path": snapshot.path, "problem": "\(error)"])
        }
    }

    private func repeatEvery(_ interval: Double, _ work: @escaping @Sendable () -> Void) {
        let source = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "amodb-proxy.maintenance"))
        source.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(200))
        source.setEventHandler(handler: work)
        timers.withLock { $0.append(Timer(source: source)) }
        source.resume()
    }
}
