import Dispatch
import Synchronization

/// The proxy, assembled: the HTTP server, the routes, the cache, the budget and the
/// upstream fetcher. Tests start it in-process on port 0; `amodb-proxy` starts it from
/// its configuration.
public final class ProxyServer: Sendable {
    public let configuration: ProxyConfiguration
    /// The cache in use (its `usage` is visible to operators and tests).
    public let cache: any ResponseCache
    /// The upstream budget (calls used in the current window).
    public let budget: UpstreamBudget
    /// What the cache did: hits, stale answers, refreshes, budget denials.
    public let statistics: CacheStatistics
    private let server: HTTPServer
    private let logger: ProxyLogger
    private let clock: any ProxyClock
    private let snapshot: CacheSnapshot?
    private let validator: AnswerValidator
    private let snapshotTimer = Mutex<SnapshotTimer?>(nil)

    /// Dispatch sources are thread-safe; the overlay just does not mark them `Sendable`.
    private struct SnapshotTimer: @unchecked Sendable {
        let source: any DispatchSourceTimer
    }

    /// Builds the proxy. `fetcher`, `cache` and `clock` default to the real ones.
    public init(
        configuration: ProxyConfiguration, fetcher: (any UpstreamFetcher)? = nil, cache: (any ResponseCache)? = nil,
        clock: any ProxyClock = SystemClock(), logger: ProxyLogger? = nil
    ) {
        self.configuration = configuration
        let logger = logger ?? ProxyLogger(minimumLevel: configuration.logLevel, secrets: [configuration.apiKey])
        self.logger = logger
        self.clock = clock
        let cache = cache ?? MemoryResponseCache(maxBytes: configuration.cacheMaxBytes)
        self.cache = cache
        self.budget = UpstreamBudget(limit: configuration.rateLimit)
        self.statistics = CacheStatistics()
        self.validator = AnswerValidator(key: configuration.apiKey)
        self.snapshot = configuration.snapshotPath.map(CacheSnapshot.init(path:))
        let fetcher = fetcher ?? URLSessionUpstreamFetcher(
            baseURL: configuration.upstreamURL, key: configuration.apiKey, timeout: configuration.upstreamTimeout)
        let policy = CachingForwarder.Policy(
            cacheTTL: configuration.cacheTTL, maxStale: configuration.maxStaleSeconds,
            negativeTTL: configuration.negativeTTL, retryAfterCap: configuration.retryAfterCap)
        let forwarder = CachingForwarder(
            cache: cache, fetcher: fetcher, budget: budget, clock: clock, logger: logger, policy: policy,
            key: configuration.apiKey, statistics: statistics)
        server = HTTPServer(
            configuration: .init(host: configuration.host, port: configuration.port, limits: configuration.limits, timeouts: configuration.timeouts),
            responder: ProxyResponder(forwarder: forwarder, languages: configuration.languages))
    }

    /// Loads the snapshot (if configured), listens and serves; returns the bound port.
    public func start() throws(HTTPServer.StartError) -> Int {
        loadSnapshot()
        let port = try server.start()
        startSnapshotTimer()
        return port
    }

    /// Open client connections now.
    public var connectionCount: Int { server.connectionCount }

    /// Stops accepting, lets requests in flight finish within the grace period, then
    /// writes the snapshot (if configured).
    public func shutdown() async {
        let timer = snapshotTimer.withLock { timer in
            defer { timer = nil }
            return timer
        }
        timer?.source.cancel()
        await server.shutdown(gracePeriod: configuration.shutdownGraceSeconds)
        if timer != nil || snapshot != nil { writeSnapshot() }
    }

    // MARK: Snapshot

    private func loadSnapshot() {
        guard let snapshot else { return }
        do {
            let entries = try snapshot.load(now: clock.now(), maxStale: configuration.maxStaleSeconds, validator: validator)
            for (key, entry) in entries { cache.store(entry, for: key) }
            if !entries.isEmpty { logger.info("cache snapshot loaded", ["entries": String(entries.count), "path": snapshot.path]) }
        } catch {
            logger.warning("cache snapshot ignored: \(error)", ["path": snapshot.path])
        }
    }

    /// Writes the snapshot now (also done periodically and on shutdown).
    public func writeSnapshot() {
        guard let snapshot else { return }
        do {
            let count = try snapshot.write(cache.allEntries(), now: clock.now())
            logger.debug("cache snapshot written", ["entries": String(count), "path": snapshot.path])
        } catch {
            logger.error("cannot write the cache snapshot", ["path": snapshot.path, "problem": "\(error)"])
        }
    }

    private func startSnapshotTimer() {
        guard snapshot != nil else { return }
        let interval = configuration.snapshotIntervalSeconds
        let source = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "amodb-proxy.snapshot"))
        source.schedule(deadline: .now() + interval, repeating: interval, leeway: .seconds(1))
        source.setEventHandler { [weak self] in self?.writeSnapshot() }
        snapshotTimer.withLock { $0 = SnapshotTimer(source: source) }
        source.resume()
    }
}
