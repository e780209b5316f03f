import AmodbCompression
import AmodbHTTP
import AmodbModels
import Dispatch
import Synchronization

/// What `/metrics` reports, in Prometheus conventions (`_total` counters, `_seconds`
/// histograms, base units). Label sets are fixed and small, so every series is an
/// atomic in a preallocated table: recording takes no lock on the request path.
package final class ProxyMetrics: Sendable {
    /// The `route` label: the template of what was asked for. The forwarded routes' labels
    /// come first, one per entry of `RouteTable` (a label's `rawValue` is its kind's), then
    /// one per entry of `OwnRoute`, then those of what named no route; every series keeps
    /// one slot per label, `allCases.count` of them.
    struct RouteLabel: Hashable, Sendable {
        let rawValue: Int

        /// The label of a forwarded route of `kind`.
        init(_ kind: Route.Kind) { rawValue = kind.rawValue }

        /// The label of a forwarded route.
        init(_ route: Route) { self.init(route.kind) }

        /// The label of one of the proxy's own routes.
        init(_ own: OwnRoute) { rawValue = Self.firstOwn + own.rawValue }

        private init(rawValue: Int) { self.rawValue = rawValue }

        private static let firstOwn = Route.Kind.allCases.count
        private static let firstUnrouted = firstOwn + OwnRoute.allCases.count

        static let healthz = RouteLabel(OwnRoute.healthz)
        static let readyz = RouteLabel(OwnRoute.readyz)
        static let metrics = RouteLabel(OwnRoute.metrics)
        static let status = RouteLabel(OwnRoute.status)
        static let statusJSON = RouteLabel(OwnRoute.statusJSON)
        static let attest = RouteLabel(OwnRoute.attest)
        /// A path that names no route.
        static let unmatched = RouteLabel(rawValue: firstUnrouted)
        /// A request the server refused before any route was read (its head unreadable).
        static let invalid = RouteLabel(rawValue: firstUnrouted + 1)

        /// Every label's text, in `rawValue` order: a forwarded route's is its template under `/3`.
        private static let texts =
            RouteTable.entries.map { "/3" + $0.template } + OwnRoute.table.map(\.label) + ["unmatched", "invalid"]

        static let allCases = texts.indices.map(RouteLabel.init(rawValue:))

        /// The forwarded amodb routes (under `/3`), which the schema check counts.
        static let forwarded = Route.Kind.allCases.map(RouteLabel.init)

        /// The forwarded route's kind, or `nil` for the proxy's own labels.
        var kind: Route.Kind? { Route.Kind(rawValue: rawValue) }

        /// Whether this is a forwarded amodb route.
        var isForwarded: Bool { kind != nil }

        /// Whether this is one of the operator's pages (`OwnRoute.isOperatorPage`).
        var isOperatorPage: Bool {
            rawValue >= Self.firstOwn && rawValue < Self.firstUnrouted
                && OwnRoute(rawValue: rawValue - Self.firstOwn)!.isOperatorPage
        }

        /// The label's text, made once: the access log copies it as it is.
        var text: String { Self.texts[rawValue] }
    }

    /// The `cache` label, from the response's typed `CacheOutcome`.
    enum CacheLabel: Int, CaseIterable {
        case hit, miss, stale, none

        var text: String { literal.description }

        /// The label as the access log copies it, without building a string.
        var literal: StaticString {
            switch self {
            case .hit: "hit"
            case .miss: "miss"
            case .stale: "stale"
            case .none: "none"
            }
        }

        init(_ outcome: CacheOutcome?) {
            switch outcome {
            case .hit, .sharedHit: self = .hit
            case .stale: self = .stale
            case .miss: self = .miss
            case nil: self = .none
            }
        }
    }

    /// Statuses with a series of their own; anything else is `other`.
    static let statuses = [
        200, 204, 304, 400, 401, 403, 404, 405, 408, 413, 414, 417, 429, 431, 500, 501, 502, 503, 504, 505,
    ]
    /// The `status` label of upstream calls: amodb's status, or what went wrong instead.
    static let upstreamStatuses = [
        "200", "401", "402", "404", "429", "500", "502", "503", "504", "other", "timeout", "unreachable", "too_large",
    ]

    private let requests: AtomicCounters
    private let requestDurations: [Histogram]
    private let upstreamCalls: AtomicCounters
    private let upstreamDuration = Histogram()
    /// Stored amodb answers the shared models could not decode, by forwarded route (`RouteLabel.forwarded` order).
    private let schemaMismatches = AtomicCounters(count: RouteLabel.forwarded.count)
    /// Body bytes sent, by content coding (`ContentCoding.allCases` order).
    private let responseBytes: AtomicCounters
    /// How callers' credentials fared, by result (`AuthResult.allCases` order).
    private let authResults: AtomicCounters
    /// API requests by the proof they carried and what became of them (`Proof.allCases` by
    /// `ProofOutcome.allCases`).
    private let proofs: AtomicCounters
    /// The App Attest exchange's outcomes (`challenge`, `key`, `session`, or what refused one).
    private let attestOutcomes = Mutex<[String: Int]>(["challenge": 0, "key": 0, "session": 0])
    private let sources = Mutex<Sources?>(nil)
    /// The status page's last hour, from samples of these counters (`sampleStatus`); made
    /// when the sources are connected, as its clock is theirs.
    private let history = Mutex<MinuteHistory?>(nil)

    /// What the gauges read at scrape time.
    struct Sources: Sendable {
        let cache: any ResponseCache
        let budget: any CallBudget
        let statistics: CacheStatistics
        let clock: any ProxyClock
        let connections: @Sendable () -> Int
        /// Sizes of the forwarder's tables, by table name.
        var tables: @Sendable () -> [(table: String, size: Int)] = { [] }
        /// The link to the Redis replicas share, when configured (its families are rendered only then).
        var redis: RedisLink?
        /// The queue that compresses stored answers.
        var variants: VariantMaker?
        /// The identity provider's key set, when users sign in (the status page lists it).
        var keySet: KeySetRefresher?
        /// The cache's memory limit, in bytes (`AMODB_CACHE_MAX_BYTES`), for the status page.
        var cacheMaxBytes = 0
        /// Whether proofs of a genuine app are checked (the status page counts requests by proof).
        var checksProofs = false
    }

    /// Metrics for the server's event loops (`HTTPServer.eventLoopCount()`).
    package convenience init() {
        self.init(eventLoops: HTTPServer.eventLoopCount())
    }

    /// Metrics for a server with `eventLoops` event loops: what requests answered on a loop
    /// count goes into that loop's lane, without a locked instruction (`AtomicCounters`).
    init(eventLoops: Int) {
        requests = AtomicCounters(
            count: RouteLabel.allCases.count * (Self.statuses.count + 1) * CacheLabel.allCases.count,
            loopLanes: eventLoops)
        requestDurations = RouteLabel.allCases.map { _ in Histogram(loopLanes: eventLoops) }
        upstreamCalls = AtomicCounters(count: Self.upstreamStatuses.count)
        responseBytes = AtomicCounters(count: ContentCoding.allCases.count, loopLanes: eventLoops)
        authResults = AtomicCounters(count: AuthResult.allCases.count, loopLanes: eventLoops)
        proofs = AtomicCounters(count: Proof.allCases.count * ProofOutcome.allCases.count, loopLanes: eventLoops)
    }

    func connect(_ sources: Sources) {
        self.sources.withLock { $0 = sources }
        let counts = statusCounts(sources.statistics)
        history.withLock { $0 = MinuteHistory(start: sources.clock.now(), counts: counts) }
    }

    /// Samples the counters into the status page's history: once a second, from a timer
    /// off the event loops (`ProxyServer`). The counters are read as `/metrics` reads them.
    func sampleStatus() {
        guard let sources = sources.withLock({ $0 }) else { return }
        let counts = statusCounts(sources.statistics)
        let now = sources.clock.now()
        history.withLock { $0?.record(counts, at: now) }
    }

    /// What the status page shows of the counters now: the sources, the counts, and the
    /// history they are read against (`nil` before the sources are connected).
    func statusReading() -> (sources: Sources, now: Double, counts: StatusCounts, history: MinuteHistory)? {
        guard let sources = sources.withLock({ $0 }) else { return nil }
        let counts = statusCounts(sources.statistics)
        let now = sources.clock.now()
        guard let history = history.withLock({ $0 }) else { return nil }
        return (sources, now, counts, history)
    }

    /// The cumulative counts the status page derives its figures from: answers to the
    /// forwarded routes by cache outcome (a miss answered 503 is refused), and the cache's
    /// calls, refreshes and denials.
    private func statusCounts(_ statistics: CacheStatistics) -> StatusCounts {
        var counts = StatusCounts(
            calls: statistics.value(.upstreamCall), refreshes: statistics.value(.refresh),
            denials: statistics.value(.budgetDenial))
        let refusedStatus = Self.statusIndex(503)
        for route in RouteLabel.forwarded {
            for statusIndex in 0...Self.statuses.count {
                let base = (route.rawValue * (Self.statuses.count + 1) + statusIndex) * CacheLabel.allCases.count
                counts.fresh += requests.value(base + CacheLabel.hit.rawValue)
                counts.stale += requests.value(base + CacheLabel.stale.rawValue)
                let misses = requests.value(base + CacheLabel.miss.rawValue)
                if statusIndex == refusedStatus { counts.refused += misses } else { counts.filled += misses }
            }
        }
        return counts
    }

    private static func statusIndex(_ status: Int) -> Int {
        statuses.firstIndex(of: status) ?? statuses.count
    }

    /// Counts one answered client request.
    /// `loop`: the event loop whose queue this runs on, if it runs on one (`ResponderContext.loopIndex`).
    func recordRequest(route: RouteLabel, status: Int, cache: CacheLabel, seconds: Double, loop: Int? = nil) {
        let index =
            (route.rawValue * (Self.statuses.count + 1) + Self.statusIndex(status)) * CacheLabel.allCases.count
            + cache.rawValue
        requests.add(index, loop: loop)
        requestDurations[route.rawValue].observe(seconds: seconds, loop: loop)
    }

    /// Counts the body bytes of one answer sent in `encoding`; `loop` as for `recordRequest`.
    func recordResponseBytes(_ bytes: Int, encoding: ContentCoding, loop: Int? = nil) {
        responseBytes.add(ContentCoding.allCases.firstIndex(of: encoding) ?? 0, bytes, loop: loop)
    }

    /// Counts one call to amodb: its status, or `timeout` / `unreachable`.
    func recordUpstream(_ label: String, seconds: Double) {
        let index = Self.upstreamStatuses.firstIndex(of: label) ?? Self.upstreamStatuses.firstIndex(of: "other")!
        upstreamCalls.add(index)
        upstreamDuration.observe(seconds: seconds)
    }

    /// Counts one request's credential check by its result; `loop` as for `recordRequest`.
    func recordAuth(_ result: AuthResult, loop: Int? = nil) {
        authResults.add(result.rawValue, loop: loop)
    }

    /// Counts one API request by the proof it carried and what became of it.
    func recordProof(_ proof: Proof, _ outcome: ProofOutcome, loop: Int? = nil) {
        proofs.add(outcome.rawValue * Proof.allCases.count + proof.rawValue, loop: loop)
    }

    /// Requests counted with `proof` and `outcome` so far.
    func proofCount(_ proof: Proof, _ outcome: ProofOutcome) -> Int {
        proofs.value(outcome.rawValue * Proof.allCases.count + proof.rawValue)
    }

    /// Counts one outcome of the App Attest exchange (off the hit path).
    func recordAttest(_ outcome: String) {
        attestOutcomes.withLock { $0[outcome, default: 0] += 1 }
    }

    /// Counts one stored amodb answer that does not decode as the shared models.
    func recordSchemaMismatch(_ route: Route) {
        schemaMismatches.add(route.kind.rawValue)
    }

    /// The exposition text, as `/metrics` serves it.
    package func render() -> String {
        var out = PrometheusText()
        var samples: [(PrometheusText.Labels, Double)] = []
        for route in RouteLabel.allCases {
            for (statusIndex, status) in (Self.statuses.map(String.init) + ["other"]).enumerated() {
                for cache in CacheLabel.allCases {
                    let index =
                        (route.rawValue * (Self.statuses.count + 1) + statusIndex) * CacheLabel.allCases.count
                        + cache.rawValue
                    let value = requests.value(index)
                    if value > 0 {
                        samples.append(
                            ([("route", route.text), ("status", status), ("cache", cache.text)], Double(value)))
                    }
                }
            }
        }
        out.counter(
            "amodb_proxy_requests_total", "Client requests answered, by route, status and cache outcome.", samples)
        out.histogram(
            "amodb_proxy_request_duration_seconds", "Time from a complete request head to its answer, by route.",
            RouteLabel.allCases.map { ([("route", $0.text)], requestDurations[$0.rawValue]) })
        out.counter(
            "amodb_proxy_upstream_requests_total", "Calls to amodb, by amodb's status (or timeout / unreachable).",
            Self.upstreamStatuses.indices.compactMap { index in
                let value = upstreamCalls.value(index)
                return value > 0 ? ([("status", Self.upstreamStatuses[index])], Double(value)) : nil
            })
        out.histogram(
            "amodb_proxy_upstream_request_duration_seconds", "Duration of calls to amodb.", [([], upstreamDuration)])
        out.counter(
            "amodb_proxy_schema_mismatch_total",
            "Stored amodb answers that do not decode as the shared models, by route.",
            RouteLabel.forwarded.enumerated().map { ([("route", $1.text)], Double(schemaMismatches.value($0))) })
        out.counter(
            "amodb_proxy_response_bytes_total", "Body bytes sent to clients, by content coding.",
            ContentCoding.allCases.enumerated().map {
                ([("encoding", $1.description)], Double(responseBytes.value($0)))
            })
        out.counter(
            "amodb_proxy_auth_total", "Credential checks of API requests (app tokens, users' ID tokens), by result.",
            AuthResult.allCases.map { ([("result", $0.label)], Double(authResults.value($0.rawValue))) })
        out.counter(
            "amodb_proxy_requests_by_proof_total",
            "API requests by the proof of a genuine app they carried (attested, app_check, user, app_token, none) and what became of them: served, refused (AMODB_PROOF), or would_refuse (served in monitor mode).",
            ProofOutcome.allCases.flatMap { outcome in
                Proof.allCases.map {
                    ([("proof", $0.label), ("outcome", outcome.label)], Double(proofCount($0, outcome)))
                }
            })
        out.counter(
            "amodb_proxy_attest_total",
            "The App Attest exchange: challenges, keys attested, sessions issued, and refusals by what failed.",
            attestOutcomes.withLock { $0 }.sorted { $0.key < $1.key }.map { ([("result", $0.key)], Double($0.value)) })
        out.counter(
            "amodb_proxy_log_lines_dropped_total",
            "Log lines dropped because their output was not being read, by stream.",
            [
                ([("stream", "stdout")], Double(LineWriter.standardOutput.droppedLines)),
                ([("stream", "stderr")], Double(LineWriter.standardError.droppedLines)),
            ])
        guard let sources = sources.withLock({ $0 }) else { return out.text }
        let usage = sources.cache.usage
        out.gauge("amodb_proxy_cache_entries", "Entries in the cache.", [([], Double(usage.entries))])
        out.gauge(
            "amodb_proxy_cache_bytes", "Bytes the cache holds: bodies, keys and a fixed overhead per entry.",
            [([], Double(usage.bytes))])
        let now = sources.clock.now()
        let used = sources.budget.used(now: now)
        out.gauge(
            "amodb_proxy_upstream_budget_limit", "Calls to amodb allowed per sliding 60 s window.",
            [([], Double(sources.budget.limit))])
        out.gauge(
            "amodb_proxy_upstream_budget_used", "Calls to amodb in the current 60 s window.", [([], Double(used))])
        out.gauge(
            "amodb_proxy_upstream_budget_remaining", "Calls to amodb left in the current 60 s window.",
            [([], Double(max(0, sources.budget.limit - used)))])
        sources.redis?.render(into: &out)
        sources.variants?.render(into: &out)
        out.gauge("amodb_proxy_open_connections", "Open client connections.", [([], Double(sources.connections()))])
        let statistics = sources.statistics
        out.counter(
            "amodb_proxy_stale_responses_total", "Answers served from stale entries, by reason.",
            [
                ([("reason", "revalidate")], Double(statistics.value(.staleWhileRevalidate))),
                ([("reason", "error")], Double(statistics.value(.staleIfError))),
                ([("reason", "budget")], Double(statistics.value(.staleForBudget))),
            ])
        out.counter(
            "amodb_proxy_cache_events_total", "What the cache did, by event.",
            CacheStatistics.Counter.allCases.map { ([("event", $0.rawValue)], Double(statistics.value($0))) })
        out.gauge(
            "amodb_proxy_forwarder_table_entries", "Entries in the forwarder's bounded tables, by table.",
            sources.tables().map { ([("table", $0.table)], Double($0.size)) })
        out.counter(
            "amodb_proxy_upstream_budget_denials_total", "Calls to amodb the budget refused.",
            [([], Double(statistics.value(.budgetDenial)))])
        let pause = sources.budget.pause(now: now)
        out.gauge(
            "amodb_proxy_budget_paused",
            "1 while calls from the fleet's window are paused for this reason (only the outage reserve is spent), else 0.",
            PauseReason.allCases.map { ([("reason", $0.rawValue)], pause?.reason == $0 ? 1 : 0) })
        out.counter(
            "amodb_proxy_budget_misses_paused_total",
            "Misses refused (503) while calls were paused and the outage reserve had no call, by reason.",
            [
                (
                    [("reason", PauseReason.redisUnreachable.rawValue)],
                    Double(statistics.value(.pausedRedisUnreachable))
                ),
                ([("reason", PauseReason.budgetLost.rawValue)], Double(statistics.value(.pausedBudgetLost))),
                ([("reason", PauseReason.budgetStarting.rawValue)], Double(statistics.value(.pausedBudgetStarting))),
            ])
        out.counter(
            "amodb_proxy_budget_refreshes_deferred_total",
            "Refreshes of stale entries that waited for slack in the window (the entry was served stale), by route.",
            Route.Kind.allCases.map {
                ([("route", RouteLabel($0).text)], Double(statistics.value(.refreshDeferred, kind: $0)))
            })
        out.counter(
            "amodb_proxy_budget_misses_refused_total",
            "Misses that got no call from the budget within their wait (503), by route.",
            Route.Kind.allCases.map {
                ([("route", RouteLabel($0).text)], Double(statistics.value(.missRefused, kind: $0)))
            })
        return out.text
    }
}

/// Measures every call to amodb for the metrics; otherwise passes it through.
struct InstrumentedFetcher: UpstreamFetcher {
    let inner: any UpstreamFetcher
    let metrics: ProxyMetrics

    func fetch(_ request: AmodbRequest) async -> Result<UpstreamResponse, UpstreamError> {
        let started = DispatchTime.now().uptimeNanoseconds
        let outcome = await inner.fetch(request)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        switch outcome {
        case .success(let response): metrics.recordUpstream(String(response.status), seconds: seconds)
        case .failure(.timedOut): metrics.recordUpstream("timeout", seconds: seconds)
        case .failure(.unreachable): metrics.recordUpstream("unreachable", seconds: seconds)
        case .failure(.tooLarge): metrics.recordUpstream("too_large", seconds: seconds)
        }
        return outcome
    }
}
