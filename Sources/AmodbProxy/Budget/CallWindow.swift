/// The key's window a configuration asks for: the one choice of where the calls are counted.
enum CallWindow {
    /// The fleet's window in Redis (`RedisCallBudget`) when several replicas share the key
    /// through `redis`; else this replica's own, in memory (`UpstreamBudget`). A lone replica
    /// (`AMODB_FLEET_SIZE=1`) needs Redis for nothing in the budget: its memory and its
    /// ledger are the whole truth of what the key spent. Either counts a call given up with
    /// no answer until a call's time (the upstream timeout and 2 s) after it was given up.
    static func of(
        _ configuration: ProxyConfiguration, redis: RedisLink?, ledger: CallLedger?, clock: any ProxyClock,
        logger: ProxyLogger
    ) -> any CallBudget {
        let clientShare = CallerShare.callsPerWindow(
            limit: configuration.rateLimit, fraction: configuration.clientUpstreamShare)
        let callTimeout = configuration.upstreamTimeout + 2
        if let redis, configuration.fleetSize > 1 {
            return RedisCallBudget(
                limit: configuration.rateLimit, clientShare: clientShare, link: redis, clock: clock,
                amodbKey: configuration.apiKey, fleetSize: configuration.fleetSize,
                reserve: configuration.budgetReserve, callTimeout: callTimeout, ledger: ledger, logger: logger)
        }
        return UpstreamBudget(
            limit: configuration.rateLimit, shares: clientShare.map { CallerShare(callsPerWindow: $0) },
            callTimeout: callTimeout, ledger: ledger, now: clock.now())
    }
}
