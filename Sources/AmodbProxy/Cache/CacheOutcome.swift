import AmodbHTTP

/// How the cache answered one request: a typed value that rides beside the response
/// (`ProxyAnswer.cacheOutcome`) and becomes `Cache-Status` text once, when the response
/// is finished. Metrics and the access log read this value; nothing parses the header back.
package enum CacheOutcome: Sendable, Equatable {
    /// Why a stale copy was served.
    package enum StaleReason: Sendable, Equatable {
        /// A background refresh runs, or is about to (stale-while-revalidate).
        case revalidate
        /// amodb failed to refresh it lately (stale-if-error).
        case error
        /// The budget had no call for the refresh.
        case budget
    }

    /// Why a miss was answered without amodb's answer.
    package enum MissDetail: Sendable, Equatable {
        /// The upstream budget had no call left.
        case budgetExhausted
        /// This client used up its share of the calls for misses.
        case clientShareSpent
        /// Too many distinct paths are being fetched at once.
        case tooManyFetches
        /// Calls to amodb are paused (Redis unreachable, the fleet's window lost or starting)
        /// and this replica's reserve had no call.
        case paused(PauseReason)

        /// Its name in `Cache-Status` (`detail=`), the access log and the fleet's failure envelopes.
        var name: String { String(describing: literal) }

        /// `name`, as the access log copies it without building a string.
        var literal: StaticString {
            switch self {
            case .budgetExhausted: "budget-exhausted"
            case .clientShareSpent: "client-share-spent"
            case .tooManyFetches: "too-many-fetches"
            case .paused(.redisUnreachable): "redis-unreachable"
            case .paused(.budgetLost): "budget-lost"
            case .paused(.budgetStarting): "budget-starting"
            }
        }

        /// Every detail, for reading a name back.
        static let all: [MissDetail] =
            [.budgetExhausted, .clientShareSpent, .tooManyFetches] + PauseReason.allCases.map { .paused($0) }
    }

    /// A fresh entry; `ttl` whole seconds of freshness left.
    case hit(ttl: Int)
    /// A fresh entry another replica fetched, read from the fleet's shared cache: amodb
    /// was not asked. `ttl` whole seconds of freshness left.
    case sharedHit(ttl: Int)
    /// A stale entry; `ttl` is negative (or zero) seconds of freshness left, as RFC 9211 has it.
    case stale(ttl: Int, reason: StaleReason, fwdStatus: Int?)
    /// Nothing usable was stored: amodb was asked (`fwdStatus` its status, if it answered),
    /// the answer `stored` or not, the request `collapsed` into another's fetch.
    case miss(fwdStatus: Int?, stored: Bool, collapsed: Bool, detail: MissDetail?)

    /// Why a miss got no call, if it did not.
    var missDetail: MissDetail? {
        if case .miss(_, _, _, let detail) = self { detail } else { nil }
    }

    /// The `Cache-Status` field value (RFC 9211 §2).
    package var cacheStatus: String {
        switch self {
        case .hit(let ttl):
            return "amodb-proxy; hit; ttl=\(ttl)"
        case .sharedHit(let ttl):
            return "amodb-proxy; hit; ttl=\(ttl); detail=shared"
        case .stale(let ttl, let reason, let fwdStatus):
            let status = fwdStatus.map { "; fwd-status=\($0)" } ?? ""
            switch reason {
            case .revalidate: return "amodb-proxy; fwd=stale\(status); ttl=\(ttl)"
            case .error: return "amodb-proxy; fwd=stale\(status); ttl=\(ttl); detail=stale-if-error"
            case .budget: return "amodb-proxy; fwd=stale\(status); ttl=\(ttl); detail=budget"
            }
        case .miss(let fwdStatus, let stored, let collapsed, let detail):
            var text = "amodb-proxy; fwd=miss"
            if let fwdStatus { text += "; fwd-status=\(fwdStatus)" }
            if stored { text += "; stored" }
            if collapsed { text += "; collapsed" }
            switch detail {
            case .some(let detail): text += "; detail=" + detail.name
            case nil: break
            }
            return text
        }
    }

    /// Appends the `Cache-Status` line: a hit's (nearly every answer's) as bytes and digits,
    /// the others from `cacheStatus`.
    func appendCacheStatus(to fields: inout RenderedFields) {
        if case .hit(let ttl) = self {
            fields.append { $0.line("Cache-Status: amodb-proxy; hit; ttl=", number: ttl) }
        } else {
            fields.append("Cache-Status", cacheStatus)
        }
    }

    /// The same outcome for a request that joined another's fetch.
    var collapsed: CacheOutcome {
        guard case .miss(let fwdStatus, let stored, _, let detail) = self else { return self }
        return .miss(fwdStatus: fwdStatus, stored: stored, collapsed: true, detail: detail)
    }
}
