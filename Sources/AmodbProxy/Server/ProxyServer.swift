/// The proxy, assembled: the HTTP server, the routes, the cache and the upstream fetcher.
/// Tests start it in-process on port 0; `amodb-proxy` starts it from its configuration.
public final class ProxyServer: Sendable {
    public let configuration: ProxyConfiguration
    /// The cache in use (its `usage` is visible to operators and tests).
    public let cache: any ResponseCache
    private let server: HTTPServer
    private let logger: ProxyLogger

    /// Builds the proxy. `fetcher`, `cache` and `clock` default to the real ones.
    public init(
        configuration: ProxyConfiguration, fetcher: (any UpstreamFetcher)? = nil, cache: (any ResponseCache)? = nil,
        clock: any ProxyClock = SystemClock(), logger: ProxyLogger? = nil
    ) {
        self.configuration = configuration
        let logger = logger ?? ProxyLogger(minimumLevel: configuration.logLevel, secrets: [configuration.apiKey])
        self.logger = logger
        let cache = cache ?? MemoryResponseCache(maxBytes: configuration.cacheMaxBytes)
        self.cache = cache
        let fetcher = fetcher ?? URLSessionUpstreamFetcher(
            baseURL: configuration.upstreamURL, key: configuration.apiKey, timeout: configuration.upstreamTimeout)
        let policy = CachingForwarder.Policy(cacheTTL: configuration.cacheTTL, retryAfterCap: configuration.retryAfterCap)
        let forwarder = CachingForwarder(
            cache: cache, fetcher: fetcher, clock: clock, logger: logger, policy: policy, key: configuration.apiKey)
        server = HTTPServer(
            configuration: .init(host: configuration.host, port: configuration.port, limits: configuration.limits, timeouts: configuration.timeouts),
            responder: ProxyResponder(forwarder: forwarder))
    }

    /// Listens and serves; returns the bound port.
    public func start() throws(HTTPServer.StartError) -> Int {
        try server.start()
    }

    /// Open client connections now.
    public var connectionCount: Int { server.connectionCount }

    /// Stops accepting and lets requests in flight finish within the grace period.
    public func shutdown() async {
        await server.shutdown(gracePeriod: configuration.shutdownGraceSeconds)
    }
}
