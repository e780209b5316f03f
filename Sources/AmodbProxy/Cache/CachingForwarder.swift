import AmodbModels
import Foundation
import Synchronization

/// Answers forwarded routes: from the cache when fresh, otherwise by one upstream call
/// per path however many clients ask at once (the others wait and share its answer).
/// Maps every upstream outcome to what the app should see.
final class CachingForwarder: Sendable {
    /// How the upstream call is made and retried.
    struct Policy: Sendable {
        /// Freshness lifetime of stored answers, in seconds.
        var cacheTTL: Double = 1800
        /// Retries after amodb's 429, at most.
        var maxRateLimitRetries = 2
        /// The longest `Retry-After` the proxy waits out, in seconds; a longer one is passed on.
        var retryAfterCap: Double = 30
    }

    private typealias Waiter = @Sendable (HTTPResponse) -> Void

    private let cache: any ResponseCache
    private let fetcher: any UpstreamFetcher
    private let clock: any ProxyClock
    private let logger: ProxyLogger
    private let policy: Policy
    private let key: APIKey
    /// Waiters per path with a fetch in flight. Touched only on misses.
    private let inFlight = Mutex<[String: [Waiter]]>([:])

    init(cache: any ResponseCache, fetcher: any UpstreamFetcher, clock: any ProxyClock, logger: ProxyLogger, policy: Policy, key: APIKey) {
        self.cache = cache
        self.fetcher = fetcher
        self.clock = clock
        self.logger = logger
        self.policy = policy
        self.key = key
    }

    /// The answer for `request`: at once on a fresh hit, else `nil` and `deliver` later.
    func respond(to request: AmodbRequest, ifNoneMatch: String?, deliver: @escaping @Sendable (HTTPResponse) -> Void) -> HTTPResponse? {
        let key = request.pathAndQuery
        let now = clock.now()
        if let entry = cache.entry(for: key), entry.isFresh(at: now) {
            return Self.response(for: entry, at: now, cacheStatus: "amodb-proxy; hit; ttl=\(entry.remainingLifetime(at: now))", ifNoneMatch: ifNoneMatch)
        }
        let waiter: Waiter = { response in deliver(Self.applyingConditional(response, ifNoneMatch: ifNoneMatch)) }
        let leads = inFlight.withLock { waiting -> Bool in
            if waiting[key] != nil {
                waiting[key]!.append(waiter)
                return false
            }
            waiting[key] = []
            return true
        }
        guard leads else { return nil }
        Task {
            let (forLeader, forOthers) = await fill(request, key: key)
            let others = inFlight.withLock { $0.removeValue(forKey: key) ?? [] }
            waiter(forLeader)
            for other in others { other(forOthers) }
        }
        return nil
    }

    /// Calls amodb (retrying 429 as it asks), stores a good answer and builds the responses
    /// for the request that caused the call and for those that joined it.
    private func fill(_ request: AmodbRequest, key: String) async -> (HTTPResponse, HTTPResponse) {
        let outcome = await fetchRetryingRateLimits(request)
        switch outcome {
        case .success(let upstream) where upstream.status == 200:
            if let problem = problemWithBody(upstream.body, of: request.route) {
                logger.error("amodb sent an unusable answer; not stored", ["path": request.route.template, "problem": problem])
                let response = failure(502, "amodb sent a response the proxy could not read.", fwdStatus: 200)
                return (response, response)
            }
            let entry = CachedResponse(body: upstream.body, storedAt: clock.now(), lifetime: policy.cacheTTL)
            cache.store(entry, for: key)
            let now = clock.now()
            return (
                Self.response(for: entry, at: now, cacheStatus: "amodb-proxy; fwd=miss; fwd-status=200; stored", ifNoneMatch: nil),
                Self.response(for: entry, at: now, cacheStatus: "amodb-proxy; fwd=miss; fwd-status=200; stored; collapsed", ifNoneMatch: nil)
            )
        case .success(let upstream):
            let response = mapUpstreamStatus(upstream, route: request.route)
            return (response, response)
        case .failure(.timedOut):
            logger.warning("amodb did not answer in time", ["path": request.route.template])
            let response = failure(504, "amodb did not answer in time.", fwdStatus: nil)
            return (response, response)
        case .failure(.unreachable):
            logger.warning("amodb is unreachable", ["path": request.route.template])
            let response = failure(502, "amodb could not be reached.", fwdStatus: nil)
            return (response, response)
        }
    }

    private func fetchRetryingRateLimits(_ request: AmodbRequest) async -> Result<UpstreamResponse, UpstreamError> {
        var retries = 0
        while true {
            let outcome = await fetcher.fetch(request)
            guard case .success(let upstream) = outcome, upstream.status == 429, retries < policy.maxRateLimitRetries else {
                return outcome
            }
            let wait = upstream.retryAfterSeconds ?? 1
            guard wait <= policy.retryAfterCap else { return outcome }
            retries += 1
            logger.warning("amodb rate limit reached; waiting as it asks", ["retry_after": String(Int(wait.rounded(.up))), "path": request.route.template])
            try? await Task.sleep(nanoseconds: UInt64(wait * 1_000_000_000))
        }
    }

    /// amodb's non-200 answers, as the app should see them (never amodb's body or headers).
    private func mapUpstreamStatus(_ upstream: UpstreamResponse, route: Route) -> HTTPResponse {
        switch upstream.status {
        case 401, 402:
            // The operator's key is at fault, not the app's request: a gateway error, logged loudly.
            logger.error(
                upstream.status == 401
                    ? "amodb rejected the API key (401): check AMODB_KEY" : "amodb says the plan has expired (402): renew it",
                ["path": route.template, "upstream_status": String(upstream.status)])
            return failure(502, "The proxy's amodb credentials were refused; the operator has been told.", fwdStatus: upstream.status)
        case 404:
            return failure(404, "The resource you requested could not be found.", fwdStatus: 404)
        case 429:
            let retryAfter = max(1, Int((upstream.retryAfterSeconds ?? 1).rounded(.up)))
            logger.warning("amodb rate limit still reached after retries", ["path": route.template])
            var headers = HTTPHeaders()
            headers.set("Retry-After", String(retryAfter))
            return failure(503, "amodb's rate limit is reached; try again in \(retryAfter) s.", fwdStatus: 429, headers: headers)
        case 504:
            logger.warning("amodb answered 504", ["path": route.template])
            return failure(504, "amodb timed out (504).", fwdStatus: 504)
        case 500...599:
            logger.warning("amodb failed", ["path": route.template, "upstream_status": String(upstream.status)])
            return failure(502, "amodb failed with status \(upstream.status).", fwdStatus: upstream.status)
        default:
            logger.error("amodb answered with an unexpected status", ["path": route.template, "upstream_status": String(upstream.status)])
            return failure(502, "amodb answered with unexpected status \(upstream.status).", fwdStatus: upstream.status)
        }
    }

    private func failure(_ status: Int, _ message: String, fwdStatus: Int?, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        var headers = headers
        headers.set("Cache-Status", "amodb-proxy; fwd=miss" + (fwdStatus.map { "; fwd-status=\($0)" } ?? ""))
        return .error(status, message, headers: headers)
    }

    /// Why a 200 body must not be served: not the route's model, or it holds the key.
    private func problemWithBody(_ body: [UInt8], of route: Route) -> String? {
        if body.contains(subsequence: Array(key.revealed.utf8)) { return "the body contains the API key" }
        let decoder = JSONDecoder()
        do {
            switch route {
            case .trending: _ = try decoder.decode(TrendingPage.self, from: Data(body))
            case .movie: _ = try decoder.decode(MovieDetails.self, from: Data(body))
            }
            return nil
        } catch {
            return "the body is not a valid \(route.template) answer"
        }
    }

    /// A 200 from a stored entry: the body, its age and remaining freshness, its validator.
    static func response(for entry: CachedResponse, at now: Double, cacheStatus: String, ifNoneMatch: String?) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add("Content-Type", "application/json;charset=utf-8")
        headers.add("Cache-Control", "public, max-age=\(entry.remainingLifetime(at: now))")
        headers.add("Age", String(entry.age(at: now)))
        headers.add("ETag", entry.etag)
        headers.add("Cache-Status", cacheStatus)
        let response = HTTPResponse(status: 200, headers: headers, body: entry.body)
        return applyingConditional(response, ifNoneMatch: ifNoneMatch)
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

extension Array where Element == UInt8 {
    /// Whether `needle` occurs in the array (used to keep the key out of responses).
    func contains(subsequence needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= count else { return false }
        let first = needle[0]
        var index = 0
        let last = count - needle.count
        while index <= last {
            if self[index] == first, self[index..<(index + needle.count)].elementsEqual(needle) { return true }
            index += 1
        }
        return false
    }
}
