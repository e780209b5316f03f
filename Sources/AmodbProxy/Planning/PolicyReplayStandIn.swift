// STAND-IN, TO BE DELETED WHEN THE REAL ENGINE (PolicyReplay.swift) IS MERGED.
//
// It has the engine's interface so that the reader, the `plan` command and their tests
// build before the engine lands. Its counting is deliberately trivial (no budget at all:
// the first request for a key in each TTL fills it, the rest are fresh) and no test
// depends on its numbers.

public import AmodbModels

/// One request of a replay: when (seconds since 1970) and what (canonical, validated).
public struct ReplayRequest: Sendable {
    public var time: Double
    public var request: AmodbRequest

    public init(time: Double, request: AmodbRequest) {
        self.time = time
        self.request = request
    }
}

/// What a replay counted.
public struct ReplayShares: Sendable {
    public var fresh, stale, filled, refused: Int
    public var staleAgesP95: Double
    public var total: Int { fresh + stale + filled + refused }
}

/// Replays requests through the cache and budget policy (stand-in: see the file's head).
public enum PolicyReplay {
    /// Stand-in: a key is filled when first asked for and again once its TTL has passed;
    /// every other request is fresh. Nothing is stale or refused.
    public static func run(
        _ requests: [ReplayRequest], plan: Int, movieTTL: Double, trendingTTL: Double, configurationTTL: Double, missWait: Double
    ) async -> ReplayShares {
        var filledAt: [AmodbRequest: Double] = [:]
        var shares = ReplayShares(fresh: 0, stale: 0, filled: 0, refused: 0, staleAgesP95: 0)
        for replayed in requests {
            let ttl: Double
            switch replayed.request.route {
            case .movie: ttl = movieTTL
            case .trending: ttl = trendingTTL
            }
            if let filled = filledAt[replayed.request], replayed.time - filled < ttl {
                shares.fresh += 1
            } else {
                filledAt[replayed.request] = replayed.time
                shares.filled += 1
            }
        }
        return shares
    }
}
