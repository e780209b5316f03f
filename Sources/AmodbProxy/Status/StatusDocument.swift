import Foundation

/// What `/status.json` says, and all the status page shows: the budget's window now, the
/// last hour by minute, the cache, the fleet, the key set and the paths that missed most.
/// Its field names and units are documented in docs/operations.md and stay stable: a field
/// is added, never renamed or given another unit. Counts are integers; times are seconds
/// since 1970; shares are fractions from 0 to 1; a value not known is `null`.
struct StatusDocument: Encodable, Sendable {
    /// The document's shape: raised only if a field must change meaning.
    let version = 1
    /// When it was made, in seconds since 1970.
    let time: Double
    let budget: Budget
    /// The answers of the minutes in `minutes` (up to the last hour) to the forwarded routes.
    let answers: Answers
    /// The last hour, oldest first, one entry a minute; the last one is the current minute so far.
    let minutes: [Minute]
    let cache: Cache
    let fleet: Fleet
    /// `null` unless users sign in (`AMODB_JWT_JWKS_URL`).
    let keySet: KeySet?
    /// The paths (cache keys, relative to `/3`) that missed most often since the start, most first.
    let missedPaths: [MissedPath]
    /// API requests since the start by the proof of a genuine app they carried, and what
    /// became of them; `null` unless proofs are checked (`AMODB_PROOF`, App Attest, App Check).
    let proofs: [ProofCount]?

    /// Requests with one proof.
    struct ProofCount: Encodable, Sendable {
        /// `attested`, `app_check`, `user`, `app_token` or `none`.
        let proof: String
        let served: Int
        let refused: Int
        /// Served in monitor mode although the policy asks another proof.
        let wouldRefuse: Int
    }

    /// The key's budget in amodb's sliding 60-second window.
    struct Budget: Encodable, Sendable {
        /// The plan's calls a minute (`AMODB_RATE_LIMIT`).
        let limit: Int
        /// This replica's calls in the window now (with Redis, the fleet's are the replicas' sum).
        let used: Int
        /// `limit` less `used`, at least 0 (as `amodb_proxy_upstream_budget_remaining`).
        let remaining: Int
        let windowSeconds: Int
        /// This replica's calls to amodb in the last 60 s: those that refreshed stale entries,
        /// and the rest, for misses (their retries and key probes included).
        let calls: Int
        let refreshes: Int
        let misses: Int
        /// Calls the budget refused in the last 60 s (a 503 or a stale answer followed).
        let refused: Int
        /// Why calls from the fleet's window are paused now (`redis_unreachable`,
        /// `budget_lost`, `budget_starting`: only the outage reserve is spent), or `null`.
        let paused: String?
        /// Seconds until the pause ends (a guess while Redis is unreachable), or `null`.
        let pausedSeconds: Int?

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(limit, forKey: .limit)
            try container.encode(used, forKey: .used)
            try container.encode(remaining, forKey: .remaining)
            try container.encode(windowSeconds, forKey: .windowSeconds)
            try container.encode(calls, forKey: .calls)
            try container.encode(refreshes, forKey: .refreshes)
            try container.encode(misses, forKey: .misses)
            try container.encode(refused, forKey: .refused)
            try container.encode(paused, forKey: .paused)  // `null`, not absent
            try container.encode(pausedSeconds, forKey: .pausedSeconds)
        }

        private enum CodingKeys: String, CodingKey {
            case limit, used, remaining, windowSeconds, calls, refreshes, misses, refused, paused, pausedSeconds
        }
    }

    /// Answers by outcome.
    struct Answers: Encodable, Sendable {
        let fresh: Int
        let stale: Int
        let filled: Int
        let refused: Int
        /// (fresh + stale) / all: answered without a call; `null` with no answer.
        let hitRatio: Double?

        init(_ counts: StatusCounts) {
            fresh = counts.fresh
            stale = counts.stale
            filled = counts.filled
            refused = counts.refused
            hitRatio = counts.answers == 0 ? nil : Double(counts.fresh + counts.stale) / Double(counts.answers)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(fresh, forKey: .fresh)
            try container.encode(stale, forKey: .stale)
            try container.encode(filled, forKey: .filled)
            try container.encode(refused, forKey: .refused)
            try container.encode(hitRatio, forKey: .hitRatio)  // `null`, not absent: the shape is stable
        }

        private enum CodingKeys: String, CodingKey {
            case fresh, stale, filled, refused, hitRatio
        }
    }

    /// One minute of the chart.
    struct Minute: Encodable, Sendable {
        /// The minute's start, in seconds since 1970.
        let start: Double
        /// Calls to amodb.
        let calls: Int
        let fresh: Int
        let stale: Int
        let filled: Int
        let refused: Int
    }

    /// This replica's cache.
    struct Cache: Encodable, Sendable {
        let entries: Int
        let bytes: Int
        let maxBytes: Int
        /// Seconds since the oldest entry held was stored; `null` when empty.
        let oldestAgeSeconds: Double?

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(entries, forKey: .entries)
            try container.encode(bytes, forKey: .bytes)
            try container.encode(maxBytes, forKey: .maxBytes)
            try container.encode(oldestAgeSeconds, forKey: .oldestAgeSeconds)
        }

        private enum CodingKeys: String, CodingKey {
            case entries, bytes, maxBytes, oldestAgeSeconds
        }
    }

    /// The replicas sharing one Redis.
    struct Fleet: Encodable, Sendable {
        /// `off` (no `AMODB_REDIS_URL`), `up` or `down`.
        let redis: String
        /// Replicas seen alive by the last heartbeat, this one included (1 without Redis).
        let replicas: Int
        /// Whether Redis is declared lost (the replica spends only its part of the limit).
        let outage: Bool
    }

    /// The identity provider's key set users' ID tokens are verified with.
    struct KeySet: Encodable, Sendable {
        /// The `kid`s of the keys in use.
        let keyIDs: [String]
        /// How many keys the set lists but the proxy cannot use.
        let skipped: Int
        /// Those keys, each with why: a count alone sends the operator to the logs.
        let skippedKeys: [SkippedKey]
        /// Why no set is held yet; `null` once one is.
        let problem: String?

        /// A key the set lists that the proxy does not use.
        struct SkippedKey: Encodable, Sendable {
            /// Its `kid`; `null` when it has none.
            let kid: String?
            /// Its place in the set's `keys`, from 0.
            let index: Int
            /// Why it is not used (`use` is `enc`, an RSA key under 2048 bits, …).
            let reason: String

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(kid, forKey: .kid)  // `null`, not absent
                try container.encode(index, forKey: .index)
                try container.encode(reason, forKey: .reason)
            }

            private enum CodingKeys: String, CodingKey {
                case kid, index, reason
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(keyIDs, forKey: .keyIDs)
            try container.encode(skipped, forKey: .skipped)
            try container.encode(skippedKeys, forKey: .skippedKeys)
            try container.encode(problem, forKey: .problem)
        }

        private enum CodingKeys: String, CodingKey {
            case keyIDs = "keyIds"
            case skipped, skippedKeys, problem
        }
    }

    /// A path that missed.
    struct MissedPath: Encodable, Sendable {
        let path: String
        /// Misses counted (an upper bound once more paths missed than are tracked).
        let misses: Int
    }

    /// How many missed paths are listed.
    static let missedPathsShown = 10

    /// The document for the counters `metrics` reads now; `nil` before the proxy is assembled.
    init?(_ metrics: ProxyMetrics) {
        guard let reading = metrics.statusReading() else { return nil }
        let sources = reading.sources
        let now = reading.now
        time = now
        let window = reading.history.window(reading.counts, at: now)
        let used = sources.budget.used(now: now)
        let pause = sources.budget.pause(now: now)
        budget = Budget(
            limit: sources.budget.limit, used: used, remaining: max(0, sources.budget.limit - used),
            windowSeconds: MinuteHistory.windowSeconds, calls: window.calls, refreshes: window.refreshes,
            misses: max(0, window.calls - window.refreshes),
            refused: window.denials, paused: pause?.reason.rawValue,
            pausedSeconds: pause.map { Int(($0.until - now).rounded(.up)) })
        let minutes = reading.history.minutes(reading.counts, at: now)
        self.minutes = minutes.map {
            Minute(
                start: $0.start, calls: $0.counts.calls, fresh: $0.counts.fresh, stale: $0.counts.stale,
                filled: $0.counts.filled, refused: $0.counts.refused)
        }
        let hour = minutes.reduce(into: StatusCounts()) { total, minute in
            total.fresh += minute.counts.fresh
            total.stale += minute.counts.stale
            total.filled += minute.counts.filled
            total.refused += minute.counts.refused
        }
        answers = Answers(hour)
        let usage = sources.cache.usage
        cache = Cache(
            entries: usage.entries, bytes: usage.bytes, maxBytes: sources.cacheMaxBytes,
            oldestAgeSeconds: sources.cache.oldestStoredAt.map { max(0, now - $0) })
        fleet = Fleet(
            redis: sources.redis.map { $0.isUp ? "up" : "down" } ?? "off", replicas: sources.redis?.replicas ?? 1,
            outage: sources.redis?.outageStart() != nil)
        keySet = sources.keySet.map {
            let summary = $0.summary
            return KeySet(
                keyIDs: summary.keyIDs, skipped: summary.skipped.count,
                skippedKeys: summary.skipped.map {
                    KeySet.SkippedKey(kid: $0.keyID, index: $0.index, reason: $0.reason)
                },
                problem: summary.problem)
        }
        missedPaths = sources.statistics.missedPaths.top(Self.missedPathsShown).map {
            MissedPath(path: $0.path, misses: $0.misses)
        }
        proofs =
            sources.checksProofs
            ? Proof.allCases.map { proof in
                ProofCount(
                    proof: proof.label, served: metrics.proofCount(proof, .served),
                    refused: metrics.proofCount(proof, .refused), wouldRefuse: metrics.proofCount(proof, .wouldRefuse))
            } : nil
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(version, forKey: .version)
        try container.encode(time, forKey: .time)
        try container.encode(budget, forKey: .budget)
        try container.encode(answers, forKey: .answers)
        try container.encode(minutes, forKey: .minutes)
        try container.encode(cache, forKey: .cache)
        try container.encode(fleet, forKey: .fleet)
        try container.encode(keySet, forKey: .keySet)  // `null`, not absent: the shape is stable
        try container.encode(proofs, forKey: .proofs)
        try container.encode(missedPaths, forKey: .missedPaths)
    }

    private enum CodingKeys: String, CodingKey {
        case version, time, budget, answers, minutes, cache, fleet, keySet, missedPaths, proofs
    }

    /// The document as `/status.json` serves it: snake_case names, keys sorted.
    func json() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Every value is a number, a string, a bool or null: encoding cannot fail.
        return (try? Array(encoder.encode(self))) ?? Array(#"{"version":1}"#.utf8)
    }
}
