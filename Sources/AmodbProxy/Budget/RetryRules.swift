import AmodbModels

/// The budget's rules for what follows a call amodb did not answer as asked: whether a
/// 429 is waited out and the call made again, what the callers are told when it is not,
/// and how long a path whose refresh failed is left alone. `KeyBudget` grants each call;
/// these decide when another one is asked for.
struct RetryRules: Sendable, Equatable {
    /// Retries after amodb's 429, at most.
    var maxRateLimitRetries = 2
    /// The longest `Retry-After` the proxy waits out, in seconds (`AMODB_RETRY_AFTER_MAX`);
    /// a longer one is passed on to the callers.
    var retryAfterCap: Double
    /// After a failed refresh, the stale copy is served without new attempts at least this
    /// long, in seconds.
    var refreshBackoff: Double = 10

    /// The seconds amodb's 429 asks for when its `Retry-After` is missing or unreadable.
    static let unreadableRetryAfter: Double = 1

    /// Whether a call amodb refused with 429, asking to wait `wait` seconds, is made again
    /// after that wait, `retries` retries in: only a short wait, and only a few times (each
    /// retry is a call of the key's window, granted again by the budget).
    func retries(after wait: Double, retries: Int) -> Bool {
        retries < maxRateLimitRetries && wait <= retryAfterCap
    }

    /// How long a path whose refresh ended in `failure` is not refreshed again, in seconds:
    /// at least `refreshBackoff`, as long as amodb asked (its 429's wait), never longer than
    /// the longest `Retry-After` anyone is told.
    func backoff(after failure: FetchFailure) -> Double {
        failure.backoff.isFinite ? min(max(failure.backoff, refreshBackoff), RetryAfter.longest) : refreshBackoff
    }

    /// amodb's 429 once it is not waited out, as the callers hear it: a 503 asking them to
    /// wait as long as amodb asked (`retryAfter`, already read), and a refresh backing off
    /// as long.
    static func rateLimited(retryAfter: Double?) -> FetchFailure {
        let wait = retryAfter ?? unreadableRetryAfter
        var refused = FetchFailure(
            status: 503,
            message: "amodb's rate limit is reached; try again in \(APIRefusal.retryAfterSeconds(wait)) s.",
            fwdStatus: 429)
        refused.retryAfter = wait
        refused.backoff = wait
        return refused
    }
}
