import AmodbCompression
import AmodbHTTP
import AmodbModels
import AmodbTestSupport
import Dispatch

@testable import AmodbProxy

// The forwarder without a server, for the suites that drive it directly (coalescing, key
// probes, bounded tables, fills): built as `ProxyServer` builds it, asked as the responder asks.

/// A forwarder over `fetcher`, as `ProxyServer` builds one, for tests that drive it directly.
func forwarder(
    _ fetcher: ScriptedUpstream, cache: any ResponseCache = MemoryResponseCache(), clock: ManualClock = ManualClock(),
    limit: Int = 40, adjust: (inout CachingForwarder.Policy) -> Void = { _ in }
) -> CachingForwarder {
    var policy = CachingForwarder.Policy(ProxyConfiguration())
    adjust(&policy)
    return CachingForwarder(
        cache: cache, fetcher: fetcher, budget: UpstreamBudget(limit: limit), clock: clock,
        logger: ProxyLogger(minimumLevel: .error, secrets: [], sink: { _ in }), policy: policy,
        validator: AnswerValidator(key: Secret(ProxyHarness.key)), statistics: CacheStatistics())
}

/// Asks `forwarder` as the responder does, from a Dispatch thread as an event loop would,
/// and waits for the answer, immediate or delivered.
func ask(
    _ forwarder: CachingForwarder, _ request: AmodbRequest, client: String? = nil,
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
