import AmodbModels
import Foundation
import Synchronization

/// Answers forwarded routes so that amodb's budget is never wasted and clients never
/// wait once a path has been filled:
/// - fresh entry: answered at once (`hit`);
/// - stale entry younger than max-stale: answered at once while one background refresh
///   runs (stale-while-revalidate), or while amodb keeps failing (stale-if-error);
/// - nothing usable: one upstream call however many clients ask (the others wait and
///   share its answer); amodb's 404 is kept briefly (negative caching).
/// Every call to amodb goes through the `UpstreamBudget`.
final class CachingForwarder: Sendable {
    /// Lifetimes, retries and back-off.
    struct Policy: Sendable {
        /// Freshness lifetime of stored answers, in seconds.
        var cacheTTL = ProxyConfiguration.defaults.cacheTTL
        /// Oldest age at which a stored answer may still be served stale, in seconds.
        var maxStale = ProxyConfiguration.defaults.maxStaleSeconds
        /// Lifetime of a remembered 404, in seconds (0: not remembered).
        var negativeTTL = ProxyConfiguration.defaults.negativeTTL
        /// Retries after amodb's 429, at most.
        var maxRateLimitRetries = 2
        /// The longest `Retry-After` the proxy waits out, in seconds; a longer one is passed on.
        var retryAfterCap = ProxyConfiguration.defaults.retryAfterCap
        /// After a failed refresh, the stale copy is served without new attempts this long, in seconds.
        var refreshBackoff: Double = 10
    }

    /// How a fetch ended, shared by every request waiting on it.
    private enum Fill: Sendable {
        /// An answer was stored: a 200, or a 404 as a negative entry.
        case stored(CachedResponse)
        /// An error for the clients; no new attempt for `backoff` seconds when refreshing.
        case failed(HTTPResponse, fwdStatus: Int?, backoff: Double)
    }

    private struct Failure: Sendable {
        var until: Double
        var fwdStatus: Int?
    }

    private typealias Waiter = @Sendable (Fill) -> Void

    private let cache: any ResponseCache
    private let fetcher: any UpstreamFetcher
    private let budget: UpstreamBudget
    private let clock: any ProxyClock
    private let logger: ProxyLogger
    private let policy: Policy
    private let validator: AnswerValidator
    let statistics: CacheStatistics
    /// Waiters per path with a fetch in flight. Touched only on misses and refreshes.
    private let inFlight = Mutex<[String: [Waiter]]>([:])
    /// Paths whose last refresh failed, until their back-off ends.
    private let failures = Mutex<[String: Failure]>([:])
    /// amodb's last word on the key: 401/402 set it, an answer clears it (`/readyz`).
    private let keyRejection = Atomic<Bool>(false)

    /// Whether amodb rejected the key (401) or the plan (402) on its last say.
    var keyRejected: Bool { keyRejection.load(ordering: .relaxed) }

    init(
        cache: any ResponseCache, fetcher: any UpstreamFetcher, budget: UpstreamBudget, clock: any ProxyClock,
        logger: ProxyLogger, policy: Policy, validator: AnswerValidator, statistics: CacheStatistics
    ) {
        self.cache = cache
        self.fetcher = fetcher
        self.budget = budget
        self.clock = clock
        self.logger = logger
        self.policy = policy
        self.validator = validator
        self.statistics = statistics
    }

    /// The answer for `request`: at once from the cache, else `nil` and `deliver` later.
    func respond(to request: AmodbRequest, ifNoneMatch: String?, deliver: @escaping @Sendable (HTTPResponse) -> Void) -> HTTPResponse? {
        let key = request.pathAndQuery
        let now = clock.now()
        if let entry = cache.entry(for: key) {
            if entry.isFresh(at: now) {
                statistics.count(entry.status == 200 ? .hit : .negativeHit)
                return Self.response(for: entry, at: now, cacheStatus: "amodb-proxy; hit; ttl=\(entry.remainingLifetime(at: now))", ifNoneMatch: ifNoneMatch)
            }
            if entry.status == 200, now - entry.storedAt < policy.maxStale {
                return serveStale(entry, for: request, key: key, now: now, ifNoneMatch: ifNoneMatch)
            }
        }
        statistics.count(.miss)
        let waiter: Waiter = { fill in
            deliver(Self.response(for: fill, at: self.clock.now(), collapsed: true, ifNoneMatch: ifNoneMatch))
        }
        let leads = inFlight.withLock { waiting -> Bool in
            if waiting[key] != nil {
                waiting[key]!.append(waiter)
                return false
            }
            waiting[key] = []
            return true
        }
        guard leads else {
            statistics.count(.collapsed)
            return nil
        }
        Task {
            let fill = await self.fill(request, key: key, priority: .miss, firstCallGranted: false)
            deliver(Self.response(for: fill, at: clock.now(), collapsed: false, ifNoneMatch: ifNoneMatch))
            finish(key, with: fill)
        }
        return nil
    }

    /// A stale answer now, and a background refresh unless one runs, amodb just failed
    /// (stale-if-error) or the budget has no call for it.
    private func serveStale(_ entry: CachedResponse, for request: AmodbRequest, key: String, now: Double, ifNoneMatch: String?) -> HTTPResponse {
        let ttl = entry.remainingLifetime(at: now)
        if let failure = failures.withLock({ $0[key] }), now < failure.until {
            statistics.count(.staleIfError)
            let status = failure.fwdStatus.map { "; fwd-status=\($0)" } ?? ""
            return Self.response(for: entry, at: now, cacheStatus: "amodb-proxy; fwd=stale\(status); ttl=\(ttl); detail=stale-if-error", ifNoneMatch: ifNoneMatch)
        }
        let starts = inFlight.withLock { waiting -> Bool in
            if waiting[key] != nil { return false }
            waiting[key] = []
            return true
        }
        if starts {
            if case .denied = budget.acquire(.refresh, now: now) {
                _ = inFlight.withLock { $0.removeValue(forKey: key) }
                statistics.count(.budgetDenial)
                statistics.count(.staleForBudget)
                return Self.response(for: entry, at: now, cacheStatus: "amodb-proxy; fwd=stale; ttl=\(ttl); detail=budget-exhausted", ifNoneMatch: ifNoneMatch)
            }
            statistics.count(.refresh)
            Task {
                let fill = await self.fill(request, key: key, priority: .refresh, firstCallGranted: true)
                finish(key, with: fill)
            }
        }
        statistics.count(.staleWhileRevalidate)
        return Self.response(for: entry, at: now, cacheStatus: "amodb-proxy; fwd=stale; ttl=\(ttl)", ifNoneMatch: ifNoneMatch)
    }

    /// Hands a finished fetch to those who joined it and remembers a failure's back-off.
    private func finish(_ key: String, with fill: Fill) {
        switch fill {
        case .stored:
            _ = failures.withLock { $0.removeValue(forKey: key) }
        case .failed(_, let fwdStatus, let backoff):
            let until = clock.now() + max(backoff, policy.refreshBackoff)
            failures.withLock { $0[key] = Failure(until: until, fwdStatus: fwdStatus) }
        }
        let joined = inFlight.withLock { $0.removeValue(forKey: key) ?? [] }
        for waiter in joined { waiter(fill) }
    }

    /// Calls amodb within the budget (retrying 429 as it asks) and stores a good answer.
    private func fill(_ request: AmodbRequest, key: String, priority: UpstreamBudget.Priority, firstCallGranted: Bool) async -> Fill {
        var retries = 0
        var granted = firstCallGranted
        while true {
            if !granted, case .denied(let retryAfter) = budget.acquire(retries == 0 ? priority : .refresh, now: clock.now()) {
                statistics.count(.budgetDenial)
                logger.warning("upstream budget spent; not calling amodb", ["path": request.route.template, "retry_after": String(Int(retryAfter.rounded(.up)))])
                return .failed(budgetResponse(retryAfter: retryAfter), fwdStatus: nil, backoff: retryAfter)
            }
            granted = false
            statistics.count(.upstreamCall)
            let outcome = await fetcher.fetch(request)
            if case .success(let upstream) = outcome {
                budget.observe(headers: upstream.headers, now: clock.now())
                if upstream.status == 429 {
                    let wait = upstream.retryAfterSeconds ?? 1
                    budget.exhaust(for: wait, now: clock.now())
                    if retries < policy.maxRateLimitRetries, wait <= policy.retryAfterCap {
                        retries += 1
                        logger.warning("amodb rate limit reached; waiting as it asks", ["retry_after": String(Int(wait.rounded(.up))), "path": request.route.template])
                        try? await Task.sleep(nanoseconds: UInt64(wait * 1_000_000_000))
                        continue
                    }
                }
            }
            return interpret(outcome, for: request, key: key)
        }
    }

    private func interpret(_ outcome: Result<UpstreamResponse, UpstreamError>, for request: AmodbRequest, key: String) -> Fill {
        let route = request.route
        if case .success(let upstream) = outcome {
            if upstream.status == 401 || upstream.status == 402 {
                keyRejection.store(true, ordering: .relaxed)
            } else if upstream.status == 200 || upstream.status == 404 {
                keyRejection.store(false, ordering: .relaxed)
            }
        }
        switch outcome {
        case .success(let upstream) where upstream.status == 200:
            if let problem = validator.problem(with: upstream.body, for: route) {
                logger.error("amodb sent an unusable answer; not stored", ["path": route.template, "problem": problem])
                return .failed(failure(502, "amodb sent a response the proxy could not read.", fwdStatus: 200), fwdStatus: 200, backoff: 0)
            }
            let entry = CachedResponse(body: upstream.body, storedAt: clock.now(), lifetime: policy.cacheTTL)
            cache.store(entry, for: key)
            return .stored(entry)
        case .success(let upstream) where upstream.status == 404:
            let body = HTTPResponse.error(404, "The resource you requested could not be found.").body
            let entry = CachedResponse(status: 404, body: body, storedAt: clock.now(), lifetime: policy.negativeTTL)
            if policy.negativeTTL > 0 { cache.store(entry, for: key) }
            return .stored(entry)
        case .success(let upstream):
            return mapUpstreamStatus(upstream, route: route)
        case .failure(.timedOut):
            logger.warning("amodb did not answer in time", ["path": route.template])
            return .failed(failure(504, "amodb did not answer in time.", fwdStatus: nil), fwdStatus: nil, backoff: 0)
        case .failure(.unreachable):
            logger.warning("amodb is unreachable", ["path": route.template])
            return .failed(failure(502, "amodb could not be reached.", fwdStatus: nil), fwdStatus: nil, backoff: 0)
        case .failure(.tooLarge):
            logger.error("amodb sent a body larger than AMODB_MAX_UPSTREAM_BYTES; not stored", ["path": route.template])
            return .failed(failure(502, "amodb sent a response larger than the proxy accepts.", fwdStatus: nil), fwdStatus: nil, backoff: 0)
        }
    }

    /// amodb's other answers, as the app should see them (never amodb's body or headers).
    private func mapUpstreamStatus(_ upstream: UpstreamResponse, route: Route) -> Fill {
        let status = upstream.status
        let fields = ["path": route.template, "upstream_status": String(status)]
        switch status {
        case 401, 402:
            // The operator's key is at fault, not the app's request: a gateway error, logged loudly.
            logger.error(status == 401 ? "amodb rejected the API key (401): check AMODB_KEY" : "amodb says the plan has expired (402): renew it", fields)
            return .failed(failure(502, "The proxy's amodb credentials were refused; the operator has been told.", fwdStatus: status), fwdStatus: status, backoff: 0)
        case 429:
            let retryAfter = upstream.retryAfterSeconds ?? 1
            logger.warning("amodb rate limit still reached after retries", fields)
            var headers = HTTPHeaders()
            headers.set("Retry-After", String(max(1, Int(retryAfter.rounded(.up)))))
            return .failed(failure(503, "amodb's rate limit is reached; try again in \(max(1, Int(retryAfter.rounded(.up)))) s.", fwdStatus: 429, headers: headers), fwdStatus: 429, backoff: retryAfter)
        case 504:
            logger.warning("amodb answered 504", fields)
            return .failed(failure(504, "amodb timed out (504).", fwdStatus: 504), fwdStatus: 504, backoff: 0)
        case 500...599:
            logger.warning("amodb failed", fields)
            return .failed(failure(502, "amodb failed with status \(status).", fwdStatus: status), fwdStatus: status, backoff: 0)
        default:
            logger.error("amodb answered with an unexpected status", fields)
            return .failed(failure(502, "amodb answered with unexpected status \(status).", fwdStatus: status), fwdStatus: status, backoff: 0)
        }
    }

    private func budgetResponse(retryAfter: Double) -> HTTPResponse {
        let seconds = max(1, Int(retryAfter.rounded(.up)))
        var headers = HTTPHeaders()
        headers.set("Retry-After", String(seconds))
        headers.set("Cache-Status", "amodb-proxy; fwd=miss; detail=budget-exhausted")
        return .error(503, "The proxy's amodb budget for this minute is spent; try again in \(seconds) s.", headers: headers)
    }

    private func failure(_ status: Int, _ message: String, fwdStatus: Int?, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        var headers = headers
        headers.set("Cache-Status", "amodb-proxy; fwd=miss" + (fwdStatus.map { "; fwd-status=\($0)" } ?? ""))
        return .error(status, message, headers: headers)
    }

    // MARK: Responses

    private static func response(for fill: Fill, at now: Double, collapsed: Bool, ifNoneMatch: String?) -> HTTPResponse {
        switch fill {
        case .stored(let entry):
            let status = "amodb-proxy; fwd=miss; fwd-status=\(entry.status); stored" + (collapsed ? "; collapsed" : "")
            return response(for: entry, at: now, cacheStatus: status, ifNoneMatch: ifNoneMatch)
        case .failed(var response, _, _):
            if collapsed, let status = response.headers["Cache-Status"] { response.headers.set("Cache-Status", status + "; collapsed") }
            return response
        }
    }

    /// A stored entry as an answer: the body, its age and remaining freshness, its validator.
    static func response(for entry: CachedResponse, at now: Double, cacheStatus: String, ifNoneMatch: String?) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add("Content-Type", "application/json;charset=utf-8")
        headers.add("Cache-Control", "public, max-age=\(max(0, entry.remainingLifetime(at: now)))")
        headers.add("Age", String(entry.age(at: now)))
        if entry.status == 200 { headers.add("ETag", entry.etag) }
        headers.add("Cache-Status", cacheStatus)
        return applyingConditional(HTTPResponse(status: entry.status, headers: headers, body: entry.body), ifNoneMatch: ifNoneMatch)
    }

    /// `If-None-Match` (RFC 9110 §13.1.2): a 304 without body when a tag matches.
    static func applyingConditional(_ response: HTTPResponse, ifNoneMatch: String?) -> HTTPResponse {
        guard response.status == 200, let ifNoneMatch, let etag = response.headers["ETag"] else { return response }
        let matches = ifNoneMatch.split(separator: ",").contains {
            let tag = $0.trimmingSpaces()
            return tag == "*" || tag == etag || tag == "W/" + etag
        }
        guard matches else { return response }
        var notModified = response
        notModified.status = 304
        notModified.body = []
        notModified.headers.remove("Content-Type")
        return notModified
    }
}
