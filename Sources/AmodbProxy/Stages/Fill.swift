import AmodbHTTP
import AmodbModels

/// The fill stage: one call to amodb for a miss or a refresh, and what its answer means.
/// It asks the budget for the call (`KeyBudget`, the one owner of the key's limit: a miss
/// waits its turn with one of its caller's share, a refresh takes only slack), waits out
/// amodb's 429 as it asks (when the budget's `RetryRules` say so), tells the budget every answer, and judges the answer (`UpstreamAnswerTable`,
/// `AnswerValidator`) into a `FetchResult` for the commit stage. It stores nothing.
final class Fill: Sendable {
    private let fetcher: any UpstreamFetcher
    /// Grants every call to amodb, and hears every answer that bears on the key's limit.
    let budget: KeyBudget
    private let clock: any ProxyClock
    private let logger: ProxyLogger
    private let policy: CacheStages.Policy
    private let validator: AnswerValidator
    private let statistics: CacheStatistics
    private let tasks: BackgroundTasks
    private let keyProbe: KeyProbe

    /// Whether amodb rejected the key (401) or the plan (402) on its last say.
    var keyRejected: Bool { keyProbe.keyRejected }

    /// A fill calling `fetcher` with the calls `budget` grants; its waits are `tasks`' (shutdown wakes them).
    init(
        fetcher: any UpstreamFetcher, budget: KeyBudget, clock: any ProxyClock, logger: ProxyLogger,
        policy: CacheStages.Policy, validator: AnswerValidator, statistics: CacheStatistics,
        tasks: BackgroundTasks
    ) {
        self.fetcher = fetcher
        self.clock = clock
        self.logger = logger
        self.policy = policy
        self.validator = validator
        self.statistics = statistics
        self.tasks = tasks
        self.budget = budget
        self.keyProbe = KeyProbe(tasks: tasks, interval: policy.keyProbeInterval)
    }

    /// Calls amodb within the budget (retrying 429 as it asks) and judges the answer. The
    /// first call of a miss is also one of its `limitKey`'s share; a retry after amodb's 429
    /// is the same miss, within the budget only. `grant`: the first call's, when it was
    /// granted already (a refresh).
    func run(
        _ request: AmodbRequest, priority: CallPriority, limitKey: String? = nil, grant: KeyBudget.Grant? = nil
    ) async -> FetchResult {
        var retries = 0
        var granted = grant
        var limitKey = limitKey
        while true {
            let decision: KeyBudget.Grant
            if let given = granted {
                decision = given
            } else {
                decision = await acquire(
                    priority, limitKey: limitKey, missOnly: request.route.entry.budget == .missOnly)
                switch decision.decision {
                case .granted, .probe:
                    break
                case .denied(let retryAfter):
                    statistics.count(.budgetDenial)
                    if priority == .miss { statistics.count(.missRefused, route: request.route) }
                    logger.warning(
                        "upstream budget spent; not calling amodb",
                        [
                            "path": request.route.template,
                            "retry_after": String(APIRefusal.retryAfterSeconds(retryAfter)),
                        ])
                    return .failed(.noCall(.budgetExhausted, retryAfter: retryAfter))
                case .shareSpent(let retryAfter):
                    statistics.count(.clientShareDenial)
                    return .failed(
                        .noCall(
                            .clientShareSpent, retryAfter: retryAfter, missOnly: request.route.entry.budget == .missOnly
                        ))
                case .paused(let reason, let retryAfter):
                    statistics.count(.budgetDenial)
                    if priority == .miss {
                        statistics.count(Self.counter(of: reason))
                        statistics.count(.missRefused, route: request.route)
                    }
                    return .failed(.noCall(.paused(reason), retryAfter: retryAfter))
                }
            }
            granted = nil
            limitKey = nil
            let (outcome, retryAfter) = await call(request, grant: decision)
            if let wait = retryAfter {
                if policy.retry.retries(after: wait, retries: retries) {
                    retries += 1
                    logger.warning(
                        "amodb rate limit reached; waiting as it asks",
                        ["retry_after": String(APIRefusal.retryAfterSeconds(wait)), "path": request.route.template])
                    // Shutdown wakes the wait: the callers then get the 429's answer at once.
                    if await tasks.pause(wait) { continue }
                }
            }
            return interpret(outcome, retryAfter: retryAfter, for: request)
        }
    }

    /// The counter of misses refused for `reason`.
    private static func counter(of reason: PauseReason) -> CacheStatistics.Counter {
        switch reason {
        case .redisUnreachable: .pausedRedisUnreachable
        case .budgetLost: .pausedBudgetLost
        case .budgetStarting: .pausedBudgetStarting
        }
    }

    /// A call from the budget: a miss waits its turn for one, with one of its `limitKey`'s
    /// share; a refresh takes one only from slack, and never waits.
    private func acquire(_ priority: CallPriority, limitKey: String?, missOnly: Bool) async -> KeyBudget.Grant {
        switch priority {
        case .miss: await budget.callForMiss(client: limitKey, missOnly: missOnly)
        case .refresh: await budget.callForRefresh()
        }
    }

    /// One call to amodb, granted as `grant`: counted, its answer told to the budget, its
    /// status to the key probe. `pause`: when amodb said 429, how long the budget now waits.
    private func call(_ request: AmodbRequest, grant: KeyBudget.Grant) async -> (
        outcome: Result<UpstreamResponse, UpstreamError>, pause: Double?
    ) {
        statistics.count(.upstreamCall)
        let outcome = await fetcher.fetch(request)
        guard case .success(let upstream) = outcome else {
            await budget.unanswered(grant: grant)
            return (outcome, nil)
        }
        let pause = await tellBudget(upstream, grant: grant)
        keyProbe.observe(status: upstream.status) { [weak self] in await self?.probeKey() }
        return (outcome, pause)
    }

    /// Gives amodb's answer to the budget (its rate-limit fields, a 429); the fields it
    /// ignores are logged by name. Returns the pause a 429 started.
    private func tellBudget(_ upstream: UpstreamResponse, grant: KeyBudget.Grant) async -> Double? {
        let retryAfter = upstream.status == 429 ? readRetryAfter(upstream) : nil
        let told = await budget.answered(
            status: upstream.status, headers: upstream.headers, retryAfter: retryAfter, grant: grant)
        for field in told.ignored {
            logger.warning("ignored an unreadable or out-of-range rate-limit field from amodb", ["field": field])
        }
        return told.pause
    }

    /// amodb's `Retry-After`, read by the one parser; an unreadable one is logged and ignored.
    private func readRetryAfter(_ upstream: UpstreamResponse) -> Double? {
        let seconds = upstream.retryAfterSeconds(now: clock.now())
        if seconds == nil, upstream.headers["retry-after"] != nil {
            logger.warning("ignored an unreadable Retry-After from amodb", ["field": "retry-after"])
        }
        return seconds
    }

    /// One cheap call to see whether amodb accepts the key again: within the budget's
    /// reserve, its status (or `nil` when no call was made or none came back).
    private func probeKey() async -> Int? {
        let grant = await budget.callForRefresh()
        guard grant.isGranted else {
            statistics.count(.budgetDenial)
            return nil
        }
        statistics.count(.keyProbe)
        guard let request = try? AmodbRequest(route: .trending(.all, .day)) else {
            await budget.unanswered(grant: grant)
            return nil
        }
        statistics.count(.upstreamCall)
        guard case .success(let upstream) = await fetcher.fetch(request) else {
            await budget.unanswered(grant: grant)
            return nil
        }
        _ = await tellBudget(upstream, grant: grant)
        if upstream.status == 200 || upstream.status == 404 { logger.info("amodb accepts the key again") }
        return upstream.status
    }

    /// What amodb's answer means for the callers (`UpstreamAnswerTable`), with the body checked.
    private func interpret(
        _ outcome: Result<UpstreamResponse, UpstreamError>, retryAfter: Double?, for request: AmodbRequest
    ) -> FetchResult {
        let route = request.route
        switch UpstreamAnswerTable.verdict(for: outcome, retryAfter: retryAfter) {
        case .store:
            guard case .success(let upstream) = outcome else { return .failed(UpstreamAnswerTable.unusable) }
            if let problem = validator.problem(with: upstream.body, for: route) {
                logger.error("amodb sent an unusable answer; not stored", ["path": route.template, "problem": problem])
                return .failed(UpstreamAnswerTable.unusable)
            }
            return .answer(
                CachedResponse(
                    body: upstream.body, storedAt: clock.now(), lifetime: policy.freshness.lifetime(of: route)),
                stored: true)
        case .storeNegative:
            let body = APIRefusal.notFound.response.body
            let entry = CachedResponse(status: 404, body: body, storedAt: clock.now(), lifetime: policy.negativeTTL)
            // Kept only for a route whose 404 a client can cause (an id it made up): a list's
            // 404 says something is wrong, and the next miss asks again.
            return .answer(entry, stored: policy.negativeTTL > 0 && route.entry.negativeCached)
        case .fail(let failure, let level, let message):
            var fields = ["path": route.template]
            if let status = failure.fwdStatus { fields["upstream_status"] = String(status) }
            logger.log(level, message, fields)
            return .failed(failure)
        }
    }
}
