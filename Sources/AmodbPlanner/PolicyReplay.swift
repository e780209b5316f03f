import AmodbHTTP
package import AmodbModels
import AmodbProxy
import Synchronization

/// One request of a replay: when (seconds since 1970) and what (canonical, validated).
package struct ReplayRequest: Sendable {
    package var time: Double
    package var request: AmodbRequest

    package init(time: Double, request: AmodbRequest) {
        self.time = time
        self.request = request
    }
}

/// What a replay counted: how each request would have been answered.
package struct ReplayShares: Sendable, Equatable {
    /// From a fresh entry.
    package var fresh = 0
    /// From a stale entry (refreshing, or its refresh waiting for slack in the budget).
    package var stale = 0
    /// By a call to amodb (the request's own, or one it joined).
    package var filled = 0
    /// With a 503: the budget had no call within the miss's wait.
    package var refused = 0
    /// The 95th percentile of the stale answers' ages, in seconds (0 with none).
    package var staleAgesP95: Double = 0
    /// Calls made to amodb.
    package var calls = 0
    /// Refused answers per minute of the log, from the minute of its first request (for
    /// the HTML report's line); empty with no refusal.
    package var refusedPerMinute: [Int] = []

    /// Requests counted.
    package var total: Int { fresh + stale + filled + refused }

    /// `part`'s share of the total, in percent (0 with none).
    package func percent(_ part: Int) -> Double {
        total == 0 ? 0 : Double(part) * 100 / Double(total)
    }
}

/// Replays requests through the proxy's own cache and budget policy: the real
/// `ProxyDriver`'s cache stages, `MemoryResponseCache` and `UpstreamBudget`, on a `SimulatedClock`,
/// with an upstream that answers every call at once. No network, no waiting in real time:
/// what the live proxy would have answered from the cache, served stale, filled or refused
/// on that traffic, for a plan and freshness lifetimes of the operator's choosing.
///
/// It assumes the cache holds the working set (answers are small here) and that amodb
/// answers every call; each client's share of the misses is not applied (a replay has no
/// clients to tell apart), so refusals are those of the budget alone.
package enum PolicyReplay {
    /// Replays `requests` (in time order) on a plan of `plan` calls a minute, with these
    /// freshness lifetimes (`AMODB_CACHE_TTL`, `AMODB_MOVIE_TTL`, `AMODB_CONFIGURATION_TTL`)
    /// and misses waiting `missWait` seconds for a call (`AMODB_MISS_WAIT`).
    package static func run(
        _ requests: [ReplayRequest], plan: Int, movieTTL: Double, trendingTTL: Double, configurationTTL: Double,
        missWait: Double
    ) async -> ReplayShares {
        var configuration = ProxyConfiguration.defaults
        configuration.rateLimit = plan
        configuration.cacheTTL = trendingTTL
        configuration.movieTTL = movieTTL
        configuration.configurationTTL = configurationTTL
        configuration.missWait = missWait
        configuration.clientUpstreamShare = 1
        configuration.searchShare = 1
        let clock = SimulatedClock(requests.first?.time ?? 0)
        let fetcher = InstantUpstream()
        let forwarder = ReplayForwarder(configuration: configuration, clock: clock, fetcher: fetcher)
        let tally = Tally(forwarder, clock: clock, firstMinute: MinuteHistory.minuteStart(requests.first?.time ?? 0))
        for (index, replayed) in requests.enumerated() {
            // Most steps never suspend (a hit starts no task): a day's replay would hold one of
            // the concurrency pool's threads for minutes, and every other task would wait behind it.
            if index % 1024 == 0 { await Task.yield() }
            await clock.advance(to: replayed.time) { await forwarder.settled() }
            let route = replayed.request.route
            forwarder.ask(replayed.request) { outcome in tally.count(outcome, for: route) }
            await forwarder.settled()
        }
        // The last misses' waits end, and their answers are counted.
        let end = (requests.last?.time ?? 0) + missWait + 1
        await clock.advance(to: end) { await forwarder.settled() }
        await forwarder.drain(within: 1)
        var shares = tally.shares
        shares.calls = fetcher.calls.load(ordering: .relaxed)
        return shares
    }

    /// Counts answers as they come, from the outcome each carries.
    private final class Tally: Sendable {
        private let state = Mutex((shares: ReplayShares(), staleAges: [Double]()))
        private let forwarder: ReplayForwarder
        private let clock: SimulatedClock
        /// The start of the log's first minute, in seconds since 1970.
        private let firstMinute: Double

        init(_ forwarder: ReplayForwarder, clock: SimulatedClock, firstMinute: Double) {
            self.forwarder = forwarder
            self.clock = clock
            self.firstMinute = firstMinute
        }

        func count(_ outcome: CacheOutcome?, for route: Route) {
            state.withLock { state in
                switch outcome {
                case .hit, .sharedHit: state.shares.fresh += 1
                case .stale(let ttl, _, _):
                    state.shares.stale += 1
                    state.staleAges.append(forwarder.lifetime(of: route) - Double(ttl))
                case .miss(_, _, _, .some):
                    state.shares.refused += 1
                    // Counted in the minute the refusal is given (the replay's clock).
                    let minute = max(0, Int((clock.now() - firstMinute) / 60))
                    if minute < Self.maxMinutes {
                        if state.shares.refusedPerMinute.count <= minute {
                            state.shares.refusedPerMinute += Array(
                                repeating: 0, count: minute + 1 - state.shares.refusedPerMinute.count)
                        }
                        state.shares.refusedPerMinute[minute] += 1
                    }
                case .miss, nil:
                    state.shares.filled += 1
                }
            }
        }

        /// Most minutes counted: a week of log (a longer one is rarely replayed at once).
        static let maxMinutes = 7 * 24 * 60

        var shares: ReplayShares {
            state.withLock { state in
                var shares = state.shares
                let ages = state.staleAges.sorted()
                if !ages.isEmpty { shares.staleAgesP95 = ages[min(ages.count - 1, Int(Double(ages.count) * 0.95))] }
                return shares
            }
        }
    }

    /// amodb as a replay sees it: every call answered at once with a small valid answer.
    private final class InstantUpstream: UpstreamFetcher {
        let calls = Atomic<Int>(0)

        func fetch(_ request: AmodbRequest) async -> Result<UpstreamResponse, UpstreamError> {
            calls.add(1, ordering: .relaxed)
            let body =
                switch request.route.entry.answer {
                case .page: #"{"page":1,"results":[],"total_pages":1,"total_results":0}"#
                case .details: #"{"id":\#(request.route.id ?? 0),"title":"replayed"}"#
                case .configuration: #"{"images":{}}"#
                case .genres: #"{"genres":[]}"#
                }
            return .success(UpstreamResponse(status: 200, body: Array(body.utf8)))
        }
    }
}
