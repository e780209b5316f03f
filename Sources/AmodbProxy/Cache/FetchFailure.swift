import AmodbHTTP
import AmodbModels

/// An error answer for the clients of one fetch: what amodb (or the budget, or the
/// transport) did, as the app should see it. Never amodb's body or headers.
struct FetchFailure: Sendable {
    /// The client's status.
    var status: Int
    /// The `status_message`.
    var message: String
    /// amodb's status, when it answered (`fwd-status` in `Cache-Status`).
    var fwdStatus: Int?
    /// Seconds to send as `Retry-After`, if any.
    var retryAfter: Double?
    /// Why no call was made, when none was.
    var detail: CacheOutcome.MissDetail?
    /// After a failed refresh, seconds without new attempts (at least the policy's back-off).
    var backoff: Double = 0

    /// The 503 for a miss that no call could be made for; `retryAfter` says when one could.
    /// `missOnly`: the miss is of a miss-only route (a search), whose own share may be the
    /// one spent. A spent share names its setting: the default share (5 calls a minute at 40)
    /// is what a client library's test run meets first, and the developer reading the 503
    /// needs to know what to raise.
    static func noCall(_ detail: CacheOutcome.MissDetail, retryAfter: Double, missOnly: Bool = false) -> FetchFailure {
        let seconds = APIRefusal.retryAfterSeconds(retryAfter)
        let message =
            switch detail {
            case .budgetExhausted: "The proxy's amodb budget for this minute is spent; try again in \(seconds) s."
            case .clientShareSpent:
                "This client has used its share of the proxy's amodb calls for new paths"
                    + (missOnly ? " (AMODB_CLIENT_SHARE, and AMODB_SEARCH_SHARE for searches" : " (AMODB_CLIENT_SHARE")
                    + " sets it; 1: no share limit); try again in \(seconds) s."
            case .tooManyFetches: "The proxy is fetching too many paths from amodb at once; try again in \(seconds) s."
            case .paused(.redisUnreachable):
                "Calls to amodb are paused: Redis is unreachable (the proxy's budget is shared there); try again in \(seconds) s."
            case .paused(.budgetLost):
                "Calls to amodb are paused: the fleet's budget was lost; resuming in \(seconds) s."
            case .paused(.budgetStarting):
                "Calls to amodb are paused: the fleet's budget is starting; resuming in \(seconds) s."
            }
        return FetchFailure(
            status: 503, message: message, fwdStatus: nil, retryAfter: retryAfter, detail: detail, backoff: retryAfter)
    }

    /// The error response; `collapsed` when the request joined another's fetch.
    func answer(collapsed: Bool) -> ProxyAnswer {
        let response = APIRefusal(
            detail == nil ? .upstreamFailed : .noCall, status: status, message, retryAfter: retryAfter
        ).response
        return ProxyAnswer(
            response, cacheOutcome: .miss(fwdStatus: fwdStatus, stored: false, collapsed: collapsed, detail: detail))
    }
}
