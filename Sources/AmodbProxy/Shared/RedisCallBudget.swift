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
///
/// The replica also remembers the calls it made in the last window, by the ids it gave
/// them, and the window it last seeded. When Redis lost the window (`FLUSHALL`, a restart
/// without persistence) or holds one this replica has not seeded, or when this replica
/// called amodb while Redis was unreachable, it puts those calls back (`SharedBudget.seed`)
/// before it takes another; it also looks once a heartbeat, so every replica has seeded a
/// new window within a beat and none spends what the others had spent.
final class RedisCallBudget: CallBudget {
    /// What this replica remembers of its own spending, for seeding the fleet's window.
    private struct Memory {
        /// The window it last seeded (when it was started, ms); `nil` until it has seeded one.
        var window: Int64?
        /// Its calls within the last window, oldest first (at most `limit`).
        var calls: [SharedBudget.Call] = []
        /// Set when it called amodb without the fleet's window knowing (Redis unreachable).
        var mustSeed = false
        /// Until when (ms) amodb's last 429 closed the window.
        var closedUntil: Int64 = 0
    }

    /// Calls per 60 s window for the whole fleet (`AMODB_RATE_LIMIT`).
    let limit: Int
    private let shared: SharedBudget
    private let link: RedisLink
    private let clock: any ProxyClock
    /// This replica's share, sized for the replicas it saw: rebuilt when that number changes.
    private let share: Mutex<(replicas: Int, budget: UpstreamBudget)>
    private let memory = Mutex(Memory())
    private let calls = Atomic<Int>(0)

    /// A budget of `limit` calls a minute for every replica using `link`'s prefix, on `clock`.
    init(limit: Int, link: RedisLink, clock: any ProxyClock) {
        self.limit = max(1, limit)
        self.link = link
        self.clock = clock
        shared = SharedBudget(client: link.client, prefix: link.prefix, limit: limit)
        share = Mutex((1, UpstreamBudget(limit: limit)))
        link.onEveryBeat { [weak self] in await self?.reconcile() }
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
        let at = Self.milliseconds(now)
        if let decision = await link.call({ _ in try await acquireShared(sharedPriority, at: at, callID: id) }) {
            switch decision {
            case .granted:
                remember(SharedBudget.Call(id: id, at: at), unknownToTheFleet: false)
                _ = local.acquire(.miss, now: now)   // recorded, should Redis go away within the window
                return .granted
            case .denied(let wait):
                return .denied(retryAfter: max(UpstreamBudget.shortestWait, Double(wait) / 1000))
            case .unseeded:
                // Started again between this replica's seed and its request: it asks again shortly.
                return .denied(retryAfter: Self.reseedPause)
            }
        }
        let decision = local.acquire(priority, now: now)
        if decision == .granted { remember(SharedBudget.Call(id: id, at: at), unknownToTheFleet: true) }
        return decision
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
        let until = Self.milliseconds(now) + Int64(wait * 1000)
        memory.withLock { $0.closedUntil = max($0.closedUntil, until) }
        _ = await link.call { _ in try await shared.close(forMilliseconds: Int64(wait * 1000), now: Self.milliseconds(now)) }
    }

    /// Calls this replica made in the window (the fleet's are in Redis).
    func used(now: Double) -> Int {
        fairShare.used(now: now)
    }

    /// A call from the fleet's window, seeding it first when this replica has not seeded the
    /// one in Redis (or called amodb behind its back), and once more if it was started again.
    private func acquireShared(_ priority: SharedBudget.Priority, at: Int64, callID: String) async throws(RedisError) -> SharedBudget.Decision {
        let known = memory.withLock { $0.mustSeed ? nil : $0.window }
        let window = if let known { known } else { try await seed(at: at) }
        let decision = try await shared.acquire(priority, now: at, callID: callID, window: window)
        guard case .unseeded = decision else { return decision }
        return try await shared.acquire(priority, now: at, callID: callID, window: try await seed(at: at))
    }

    /// Once a heartbeat: seeds the window in Redis if it is not the one this replica seeded
    /// (lost, started again) or this replica called amodb without it.
    private func reconcile() async {
        let at = Self.milliseconds(clock.now())
        let (known, mustSeed) = memory.withLock { ($0.window, $0.mustSeed) }
        _ = await link.call { _ in
            let current = try await shared.windowStart()
            if mustSeed || current == nil || current != known { _ = try await seed(at: at) }
        }
    }

    /// Puts this replica's calls of the window ending at `at` back into the fleet's window;
    /// returns that window. Should it fail, the next call seeds again.
    private func seed(at: Int64) async throws(RedisError) -> Int64 {
        let (calls, closedUntil, hadWindow) = memory.withLock { memory in
            memory.mustSeed = false
            memory.calls.removeAll { $0.at <= at - shared.windowMilliseconds }
            return (memory.calls, memory.closedUntil, memory.window != nil)
        }
        // Only a replica that had seeded a window knows one was lost: a window it starts waits
        // for the others' calls. A replica that never had one (a fleet starting) waits for none.
        let replicas = hadWindow ? link.replicasRecently : 1
        do {
            let window = try await shared.seed(
                calls, replica: link.replicaID, replicas: replicas,
                settleMilliseconds: Int64(link.replicaLifetime * 1000), closedUntil: closedUntil > at ? closedUntil : nil, now: at)
            memory.withLock { $0.window = window }
            return window
        } catch {
            memory.withLock { $0.mustSeed = true }
            throw error
        }
    }

    /// Remembers a call this replica made; `unknownToTheFleet` when Redis did not grant it.
    private func remember(_ call: SharedBudget.Call, unknownToTheFleet: Bool) {
        memory.withLock { memory in
            memory.calls.append(call)
            if memory.calls.count > limit { memory.calls.removeFirst(memory.calls.count - limit) }
            if unknownToTheFleet { memory.mustSeed = true }
        }
    }

    /// How long a replica waits before asking again when the window was started again under it, in seconds.
    private static let reseedPause = 0.05

    private static func milliseconds(_ seconds: Double) -> Int64 {
        Int64((seconds * 1000).rounded())
    }
}
