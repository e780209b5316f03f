import AmodbCompression
import AmodbHTTP
import AmodbModels
import AmodbTestSupport
import Dispatch

@testable import AmodbProxy

// The forwarder without a server, for the suites that drive it directly (coalescing, key
// probes, bounded tables, fills): built as `ProxyServer` builds it, asked as the responder asks.

/// A driver over the cache stages alone, built as `ProxyServer` builds them: `window` is the
/// key's window, in memory or a test's own.
func cacheDriver(
    cache: any ResponseCache = MemoryResponseCache(), fetcher: any UpstreamFetcher, window: any CallBudget,
    clock: any ProxyClock, policy: CacheStages.Policy, statistics: CacheStatistics = CacheStatistics()
) -> ProxyDriver {
    let tasks = BackgroundTasks(clock: clock)
    return ProxyDriver(
        stages: CacheStages(
            cache: cache, fetcher: fetcher, budget: policy.budget(window: window, clock: clock, tasks: tasks),
            tasks: tasks, clock: clock, logger: ProxyLogger(minimumLevel: .error, secrets: [], sink: { _ in }),
            policy: policy, validator: AnswerValidator(key: Secret(ProxyHarness.key)), statistics: statistics))
}

/// A driver over `fetcher`'s cache stages, for tests that drive them directly.
func forwarder(
    _ fetcher: ScriptedUpstream, cache: any ResponseCache = MemoryResponseCache(), clock: ManualClock = ManualClock(),
    limit: Int = 40, adjust: (inout CacheStages.Policy) -> Void = { _ in }
) -> ProxyDriver {
    var policy = CacheStages.Policy(ProxyConfiguration())
    adjust(&policy)
    return cacheDriver(
        cache: cache, fetcher: fetcher, window: UpstreamBudget(limit: limit), clock: clock, policy: policy)
}

extension ProxyDriver {
    /// The answer for `request` from the cache stages, asked as an admitted request is:
    /// now, or `nil` and later to the delivery `later()` makes.
    func respond(
        to request: AmodbRequest, ifNoneMatch: String? = nil, accept: AcceptEncoding = AcceptEncoding(),
        client: String?, later: () -> AnswerDelivery
    ) -> ProxyAnswer? {
        lookUp(
            CacheQuery(
                request: request, key: CacheKey(request), limitKey: client, accept: accept, ifNoneMatch: ifNoneMatch),
            later: later)
    }
}

/// Asks `forwarder` as the responder does, from a Dispatch thread as an event loop would,
/// and waits for the answer, immediate or delivered.
func ask(
    _ forwarder: ProxyDriver, _ request: AmodbRequest, client: String? = nil,
    accept: AcceptEncoding = AcceptEncoding()
) async -> ProxyAnswer {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async {
            let immediate = forwarder.respond(to: request, ifNoneMatch: nil, accept: accept, client: client) {
                { continuation.resume(returning: $0) }
            }
            if let immediate { continuation.resume(returning: immediate) }
        }
    }
}
