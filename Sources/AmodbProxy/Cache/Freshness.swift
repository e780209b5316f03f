import AmodbModels

/// How long each route's answers are fresh, and how old they may still be served stale:
/// the one rule the forwarder, the snapshot and the replicas' shared cache all read.
struct Freshness: Sendable, Equatable {
    /// Lifetime of a list (`RouteTable.Lifetime.list`, `AMODB_CACHE_TTL`), in seconds.
    var list: Double
    /// Lifetime of a title's or person's details (`.details`, `AMODB_MOVIE_TTL`), in seconds.
    var details: Double
    /// Lifetime of reference data such as `/configuration` (`.reference`,
    /// `AMODB_CONFIGURATION_TTL`), in seconds.
    var reference: Double
    /// `AMODB_MAX_STALE`: the oldest age at which an answer may be served stale, in seconds
    /// (0: never served stale); raised per route by `oldestStale(of:)`.
    var maxStale: Double

    /// The lifetimes and max-stale `configuration` sets.
    init(_ configuration: ProxyConfiguration) {
        list = configuration.cacheTTL
        details = configuration.movieTTL
        reference = configuration.configurationTTL
        maxStale = configuration.maxStaleSeconds
    }

    /// How long a stored 200 of `route` is fresh, in seconds: the setting its table entry names.
    func lifetime(of route: Route) -> Double {
        switch route.entry.lifetime {
        case .list: list
        case .details: details
        case .reference: reference
        }
    }

    /// The setting that sets `route`'s lifetime, as messages name it.
    static func setting(of route: Route) -> String {
        route.entry.lifetime.setting
    }

    /// The oldest age at which a 200 of `route` may still be served stale, in seconds:
    /// `AMODB_MAX_STALE`, but at least twice the route's lifetime.
    ///
    /// Max-stale counts from when the answer was stored, so a lifetime as long as it (a
    /// movie or the configuration kept a day, with the default day of max-stale) would leave
    /// no stale window at all: each expiry would keep a user waiting on amodb, and an amodb
    /// outage would find nothing to serve. Twice the lifetime gives every route a stale
    /// window at least as long as its freshness, and leaves the default trending window
    /// (a day, over 30 minutes of freshness) as it is. 0 keeps meaning "never stale".
    func oldestStale(of route: Route) -> Double {
        maxStale == 0 ? 0 : max(maxStale, 2 * lifetime(of: route))
    }
}
