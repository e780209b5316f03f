import AmodbHTTP
package import AmodbModels

/// Counters of what the cache and the budget did, for operators (metrics) and tests.
/// Counting takes no lock on the request path, and a hit counted on an event loop's queue
/// takes no locked instruction either (`AtomicCounters`' lanes).
package final class CacheStatistics: Sendable {
    /// What is counted.
    package enum Counter: String, CaseIterable, Sendable {
        /// Answered from a fresh entry.
        case hit
        /// Answered from a fresh negative (404) entry.
        case negativeHit = "negative_hit"
        /// Needed amodb: nothing usable was stored.
        case miss
        /// Joined another request's fetch of the same path.
        case collapsed
        /// Answered from a stale entry while it was (or was about to be) refreshed.
        case staleWhileRevalidate = "stale_while_revalidate"
        /// Answered from a stale entry because amodb failed to refresh it.
        case staleIfError = "stale_if_error"
        /// Answered from a stale entry because the budget had no call for its refresh.
        case staleForBudget = "stale_budget"
        /// Background refreshes started.
        case refresh
        /// Calls the budget refused (a 503 or a stale answer followed).
        case budgetDenial = "budget_denial"
        /// Calls made to amodb, retries and key probes included.
        case upstreamCall = "upstream_call"
        /// Calls made to see whether amodb accepts a refused key again.
        case keyProbe = "key_probe"
        /// Misses refused because the client had used its share of the calls.
        case clientShareDenial = "client_share_denial"
        /// Misses refused because Redis was unreachable and the reserve had no call.
        case pausedRedisUnreachable = "paused_redis_unreachable"
        /// Misses refused because the fleet's window was lost and the reserve had no call.
        case pausedBudgetLost = "paused_budget_lost"
        /// Misses refused while a new fleet's window settled and the reserve had no call.
        case pausedBudgetStarting = "paused_budget_starting"
    }

    /// What the budget did to one route's requests, counted per route.
    package enum RouteEvent: String, CaseIterable, Sendable {
        /// A stale entry's refresh waited for slack in the window; the entry was served stale.
        case refreshDeferred = "refresh_deferred"
        /// A miss got no call within its wait, and its clients a 503.
        case missRefused = "miss_refused"
    }

    /// One counter per `Counter`, in `allCases` order, with a lane per event loop.
    private let counters: AtomicCounters
    /// One counter per `RouteEvent` and route kind (`Route.Kind`).
    private let routeEvents = AtomicCounters(count: RouteEvent.allCases.count * Route.Kind.allCases.count)
    /// The paths that missed most often (the status page's list), counted with each miss.
    let missedPaths = MissedPaths()

    /// Counters for the server's event loops (`HTTPServer.eventLoopCount()`).
    package convenience init() {
        self.init(eventLoops: HTTPServer.eventLoopCount())
    }

    /// Counters with a single-writer lane for each of `eventLoops` event loops (`AtomicCounters`).
    init(eventLoops: Int) {
        counters = AtomicCounters(count: Counter.allCases.count, loopLanes: eventLoops)
    }

    /// Adds one; in the lane of event loop `loop` when this runs on that loop's queue
    /// (`ResponderContext.loopIndex`), else in the shared lane.
    package func count(_ counter: Counter, loop: Int? = nil) {
        counters.add(counter.index, loop: loop)
    }

    /// Counts one miss of the path cached under `key`: `miss`, and the path in `missedPaths`.
    func countMiss(_ key: String) {
        counters.add(Counter.miss.index)
        missedPaths.record(key)
    }

    /// The count so far.
    package func value(_ counter: Counter) -> Int {
        counters.value(counter.index)
    }

    /// Adds one to `event`'s count for `route`'s kind (off the hit path: a shared lane).
    func count(_ event: RouteEvent, route: Route) {
        count(event, kind: route.kind)
    }

    /// Counts `event` for a route of `kind`.
    func count(_ event: RouteEvent, kind: Route.Kind) {
        routeEvents.add(Self.index(event, kind))
    }

    /// `event`'s count so far for routes of kind `kind`.
    package func value(_ event: RouteEvent, kind: Route.Kind) -> Int {
        routeEvents.value(Self.index(event, kind))
    }

    private static func index(_ event: RouteEvent, _ kind: Route.Kind) -> Int {
        RouteEvent.allCases.firstIndex(of: event)! * Route.Kind.allCases.count + kind.rawValue
    }
}

extension CacheStatistics.Counter {
    /// Its position in `allCases`: where it is kept.
    fileprivate var index: Int {
        switch self {
        case .hit: 0
        case .negativeHit: 1
        case .miss: 2
        case .collapsed: 3
        case .staleWhileRevalidate: 4
        case .staleIfError: 5
        case .staleForBudget: 6
        case .refresh: 7
        case .budgetDenial: 8
        case .upstreamCall: 9
        case .keyProbe: 10
        case .clientShareDenial: 11
        case .pausedRedisUnreachable: 12
        case .pausedBudgetLost: 13
        case .pausedBudgetStarting: 14
        }
    }
}
