package import AmodbModels

/// The proxy's cache and budget policy as the planner's replay drives it (`PolicyReplay`,
/// in AmodbPlanner): the real `ProxyDriver`'s cache stages, `MemoryResponseCache` and
/// `UpstreamBudget`, on the replay's clock and upstream, asked one request at a time. The
/// planner sees only this, so the driver's own interface stays the proxy's.
package final class ReplayForwarder: Sendable {
    private let driver: ProxyDriver
    private let freshness: Freshness

    /// A forwarder with `configuration`'s limit, lifetimes and miss wait, an empty cache of
    /// its size, and no log.
    package init(configuration: ProxyConfiguration, clock: any ProxyClock, fetcher: any UpstreamFetcher) {
        let policy = CacheStages.Policy(configuration)
        freshness = policy.freshness
        let tasks = BackgroundTasks(clock: clock)
        driver = ProxyDriver(
            stages: CacheStages(
                cache: MemoryResponseCache(maxBytes: configuration.cacheMaxBytes), fetcher: fetcher,
                budget: policy.budget(
                    window: UpstreamBudget(limit: configuration.rateLimit), clock: clock, tasks: tasks),
                tasks: tasks, clock: clock, logger: ProxyLogger(minimumLevel: .error, sink: { _ in }), policy: policy,
                validator: AnswerValidator(key: Secret("amodb-proxy-replay")),
                statistics: CacheStatistics(eventLoops: 0)))
    }

    /// Asks for `request` as a client that no share of the calls applies to; `answered`
    /// gets the answer's outcome (`nil`: none said), at once or when the answer comes.
    package func ask(_ request: AmodbRequest, answered: @escaping @Sendable (CacheOutcome?) -> Void) {
        let query = CacheQuery(request: request, key: CacheKey(request), limitKey: nil)
        let answer = driver.lookUp(query) { { answer in answered(answer.cacheOutcome) } }
        if let answer { answered(answer.cacheOutcome) }
    }

    /// How long a stored answer of `route` is fresh, in seconds.
    package func lifetime(of route: Route) -> Double {
        freshness.lifetime(of: route)
    }

    /// Returns once every task has ended or waits for the clock: the request asked last
    /// has gone as far as it can until the clock moves.
    package func settled() async {
        await driver.stages.settled()
    }

    /// Lets the fetches in flight finish for at most `seconds`.
    package func drain(within seconds: Double) async {
        await driver.stages.drain(within: seconds)
    }

    /// The request a logged cache key stands for, if the key is one the proxy makes.
    package static func request(ofKey key: String) -> AmodbRequest? {
        CacheKey.request(of: key)
    }
}
