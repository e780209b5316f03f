import AmodbModels

/// The one table from what amodb answered to what the proxy does with it: store the
/// answer, remember a 404, or give the clients an error (and say how loudly to log it).
enum UpstreamAnswerTable {
    /// What to do with one upstream outcome.
    enum Verdict: Sendable {
        /// A 200: validate it, then store and serve it.
        case store
        /// A 404: remember it for the negative lifetime and serve amodb's "not found".
        case storeNegative
        /// Anything else: answer the clients with this, after logging `log` at `level`.
        case fail(FetchFailure, level: ProxyLogger.Level, log: String)
    }

    /// The verdict on `outcome`; `retryAfter` is amodb's `Retry-After` already read (429 only).
    static func verdict(for outcome: Result<UpstreamResponse, UpstreamError>, retryAfter: Double?) -> Verdict {
        switch outcome {
        case .success(let upstream):
            let status = upstream.status
            func failure(_ clientStatus: Int, _ message: String) -> FetchFailure {
                FetchFailure(status: clientStatus, message: message, fwdStatus: status)
            }
            switch status {
            case 200:
                return .store
            case 404:
                return .storeNegative
            case 401:
                // The operator's key is at fault, not the app's request: a gateway error, logged loudly.
                return .fail(
                    failure(502, Self.credentialsRefused), level: .error,
                    log: "amodb rejected the API key (401): check AMODB_KEY")
            case 402:
                return .fail(
                    failure(502, Self.credentialsRefused), level: .error,
                    log: "amodb says the plan has expired (402): renew it")
            case 429:
                // The budget says what the callers are told, and how long a refresh backs off.
                return .fail(
                    RetryRules.rateLimited(retryAfter: retryAfter), level: .warning,
                    log: "amodb rate limit still reached after retries")
            case 504:
                return .fail(failure(504, "amodb timed out (504)."), level: .warning, log: "amodb answered 504")
            case 500...599:
                return .fail(failure(502, "amodb failed with status \(status)."), level: .warning, log: "amodb failed")
            default:
                return .fail(
                    failure(502, "amodb answered with unexpected status \(status)."), level: .error,
                    log: "amodb answered with an unexpected status")
            }
        case .failure(.timedOut):
            return .fail(timedOut, level: .warning, log: "amodb did not answer in time")
        case .failure(.unreachable):
            return .fail(
                FetchFailure(status: 502, message: "amodb could not be reached."), level: .warning,
                log: "amodb is unreachable")
        case .failure(.tooLarge):
            return .fail(
                FetchFailure(status: 502, message: "amodb sent a response larger than the proxy accepts."),
                level: .error, log: "amodb sent a body larger than AMODB_MAX_UPSTREAM_BYTES; not stored")
        }
    }

    /// No answer from amodb in time (for a replica that waited on another's fetch: not within its timeout and margin).
    static let timedOut = FetchFailure(status: 504, message: "amodb did not answer in time.")

    /// A 200 that must not be stored or served (see `AnswerValidator`).
    static let unusable = FetchFailure(
        status: 502, message: "amodb sent a response the proxy could not read.", fwdStatus: 200)

    private static let credentialsRefused = "The proxy's amodb credentials were refused; the operator has been told."
}
