import AmodbModels

extension ConfigurationLoader {
    /// How the key's calls a minute are spent.
    static let budgetSettings: [Setting] = [
        Setting(
            "AMODB_RATE_LIMIT", flag: "--rate-limit", \.rateLimit, .integer(1...100_000),
            help: "calls to amodb per minute at most (plan: 20, 40, 120)", accepts: "1–100,000",
            doc: "calls to amodb per sliding minute at most (your plan: 20, 40, 120)"),
        Setting(
            "AMODB_MISS_WAIT", flag: "--miss-wait", \.missWait, .seconds(0...30),
            help: "seconds a miss waits for a call when the budget is spent", accepts: "0–30 s",
            doc: "seconds a miss waits for a call when the window is spent, before its `503` (`0`: no wait)"),
        Setting(
            "AMODB_CLIENT_SHARE", flag: "--client-share", \.clientUpstreamShare, .share,
            help: "each client's share of the calls for misses, 0-1; 1: no limit", accepts: "above 0, at most 1",
            doc: "each client's share of those calls for misses (`1`: no share limit)"),
        Setting(
            "AMODB_ROUTES", flag: "--routes", \.extraRoutes, .routes,
            help:
                "more of amodb to serve: \(RouteTable.entries.filter { !$0.byDefault }.map(\.name).joined(separator: ", ")), or all",
            accepts: "route names, comma-separated",
            doc:
                "routes served beyond trending, movie and configuration, each spending the key when asked (`all`, or names from [the route table](caching.md#routes))"
        ),
        Setting(
            "AMODB_SEARCH_SHARE", flag: "--search-share", \.searchShare, .share,
            help: "each client's share of the calls for searches' misses, 0-1", accepts: "above 0, at most 1",
            doc: "each client's share of the calls for misses of `/3/search/movie`, on top of its client share"),
    ]

    /// How many requests each client may make.
    static let clientLimitSettings: [Setting] = [
        Setting(
            "AMODB_CLIENT_RATE_LIMIT", flag: "--client-rate-limit", \.clientRateLimit, .integer(0...10_000_000),
            help: "requests a minute per client; 0: off", accepts: "0–10,000,000",
            doc: "requests a minute per client (token and address, or address); `0`: off"),
        Setting(
            "AMODB_CLIENT_BURST", flag: "--client-burst", \.clientBurst, .integer(1...10_000_000),
            help: "requests a client may make at once", accepts: "1–10,000,000",
            doc: "requests a client may make at once"),
        Setting(
            "AMODB_RATE_LIMIT_EXEMPT", flag: "--rate-limit-exempt", \.rateLimitExempt, .networks,
            help: "client addresses (IPs/CIDRs) not limited per address", accepts: "IPs and CIDRs",
            doc: "client addresses not limited per address (by the token alone)"),
        Setting(
            "AMODB_IPV6_PREFIX", flag: "--ipv6-prefix", \.ipv6Prefix, .integer(ClientNetwork.prefixes),
            help: "an IPv6 client is its address's first N bits (64: one device's /64)", accepts: "32–128",
            doc:
                "the leading bits of an IPv6 address that are one client for every per-address limit (`64`: a device's /64; `56` or `48`: a home's or a site's; `128`: each address)"
        ),
    ]
}
