import AmodbRedis
import Synchronization

/// amodb's budget spent by a fleet of replicas: `SharedBudget` in Redis (one sliding
/// window, a refresh only from its slack, a 429 closing it for every replica, amodb's
/// limit headers binding all) while Redis answers. While it does not, this replica spends
/// from its fair share: `AMODB_RATE_LIMIT` divided by the replicas it last saw alive, so the
/// fleet as a whole stays within the key's limit.
///
/// The share is an `UpstreamBudget` that also records the calls the fleet's budget granted
/// to this replica, so an outage does not start it with a window it believes empty.
final class RedisCallBudget: CallBudget {
    /// Calls per 60 s window for the whole fleet (`AMODB_RATE_LIMIT`).
    let limit: Int
    private let shared: SharedBudget
    private let link: RedisLink
    /// This replica's share, sized for the replicas it saw: rebuilt when that number changes.
    private let share: Mutex<(replicas: Int, budget: UpstreamBudget)>
    private let calls = Atomic<Int>(0)

    /// A budget of `limit` calls a minute for every replica using `link`'s prefix.
    init(limit: Int, link: RedisLink) {
        self.limit = max(1, limit)
        self.link = link
        shared = SharedBudget(client: link.client, prefix: link.prefix, limit: limit)
        share = Mutex((1, UpstreamBudget(limit: limit)))
    }

    /// This replica's share now, resized when the replicas seen alive changed.
    private var fairShare: UpstreamBudget {
        let replicas = link.replicas
        return share.withLock { share in
            if share.replicas != replicas { share = (replicas, UpstreamBudget(limit: max(1, limit / replicas))) }
            return share.budget
        }
    }

    func acquire(_ priority: CallPriority, now: Double) async -> CallDecision {
        let local = fairShare
        let id = link.replicaID + ":" + String(calls.add(1, ordering: .relaxed).newValue)
        let sharedPriority: SharedBudget.Priority = priority == .miss ? .miss : .refresh
        if let decision = await link.call({ _ in try await shared.acquire(sharedPriority, now: Self.milliseconds(now), callID: id) }) {
            switch decision {
            case .granted:
                _ = local.acquire(.miss, now: now)   // recorded, should Redis go away within the window
                return .granted
            case .denied(let wait):
                return .denied(retryAfter: max(UpstreamBudget.shortestWait, Double(wait) / 1000))
            }
        }
        return local.acquire(priority, now: now)
    }

    func observe(headers: [String: String], now: Double) async -> [String] {
        let ignored = fairShare.observe(headers: headers, now: now)
        let read = UpstreamBudget.read(headers: headers, now: now)
        if read.limit != nil || read.remaining != nil {
            _ = await link.call { _ in
                try await shared.observe(limit: read.limit, remaining: read.remaining, resetAt: read.resetAt.map(Self.milliseconds), now: Self.milliseconds(now))
            }
        }
        return ignored
    }

    func exhaust(for seconds: Double, now: Double) async {
        fairShare.exhaust(for: seconds, now: now)
        let wait = seconds.isFinite ? min(max(0, seconds), UpstreamBudget.longestReset) : UpstreamBudget.longestReset
        _ = await link.call { _ in try await shared.close(forMilliseconds: Int64(wait * 1000), now: Self.milliseconds(now)) }
    }

    /// Calls this replica made in the window (the fleet's are in Redis).
    func used(now: Double) -> Int {
        fairShare.used(now: now)
    }

    private static func milliseconds(_ seconds: Double) -> Int64 {
        Int64((seconds * 1000).rounded())
    }
}
