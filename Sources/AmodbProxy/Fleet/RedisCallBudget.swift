import AmodbCrypto
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
/// Each client's share of the calls for misses (`clientShare` a window) is the fleet's too:
/// the script that takes a miss's call checks and charges the client's share in the same
/// step, under a key named by a keyed hash of the client (`<prefix>share:<32 hex digits>`),
/// never by what the client sent. While Redis is away, this replica keeps that part of the
/// share that its part of the budget has: `clientShare` divided by the replicas it last saw
/// alive, at least one call.
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
    /// Calls each client may cause per window for misses, across the fleet; `nil`: no share limit.
    let clientShare: Int?
    /// Names a client's share key: the same name in every replica holding the amodb key.
    private let clientNames: HMACSHA256
    private let shared: SharedBudget
    private let link: RedisLink
    private let clock: any ProxyClock
    /// This replica's share, sized for the replicas it saw: rebuilt when that number changes.
    private let share: Mutex<(replicas: Int, budget: UpstreamBudget)>
    private let memory = Mutex(Memory())
    private let calls = Atomic<Int>(0)

    /// A budget of `limit` calls a minute for every replica using `link`'s prefix, on `clock`,
    /// with `clientShare` of them a window for each client's misses (`nil`: no share limit);
    /// the share keys are named under a key derived from `amodbKey`.
    init(limit: Int, clientShare: Int?, link: RedisLink, clock: any ProxyClock, amodbKey: Secret) {
        self.limit = max(1, limit)
        self.clientShare = clientShare.map { max(1, $0) }
        self.link = link
        self.clock = clock
        clientNames = HMACSHA256(derivedFrom: Array(amodbKey.revealed.utf8), purpose: Self.clientNamePurpose)
        shared = SharedBudget(client: link.client, prefix: link.prefix, limit: limit)
        share = Mutex((1, Self.fairShare(of: max(1, limit), clientShare: self.clientShare, replicas: 1)))
        link.onEveryBeat { [weak self] in await self?.reconcile() }
    }

    /// What the amodb key is turned into the share keys' key with: a key derived for one purpose serves no other.
    private static let clientNamePurpose = "amodb-proxy client share key v1"

    /// This replica's share now, resized when the replicas seen alive changed.
    private var fairShare: UpstreamBudget {
        let replicas = link.replicas
        return share.withLock { share in
            if share.replicas != replicas {
                share = (replicas, Self.fairShare(of: limit, clientShare: clientShare, replicas: replicas))
            }
            return share.budget
        }
    }

    /// One replica's part of the budget, and of each client's share, among `replicas`: at least one call of each.
    private static func fairShare(of limit: Int, clientShare: Int?, replicas: Int) -> UpstreamBudget {
        let replicas = max(1, replicas)
        return UpstreamBudget(
            limit: max(1, limit / replicas),
            shares: clientShare.map { ClientUpstreamShare(callsPerWindow: max(1, $0 / replicas)) })
    }

    /// `client`'s share in Redis: its key is the first 16 bytes of a keyed hash of the client,
    /// so neither its length nor its characters are the client's to choose.
    private func sharedShare(of client: String?) -> SharedBudget.ClientShare? {
        guard let client, let clientShare else { return nil }
        return shared.share(named: clientNames.hexCode(for: Array(client.utf8), bytes: 16), calls: clientShare)
    }

    func acquire(_ priority: CallPriority, client: String?, now: Double) async -> CallDecision {
        let local = fairShare
        let id = link.replicaID + ":" + String(calls.add(1, ordering: .relaxed).newValue)
        let sharedPriority: SharedBudget.Priority = priority == .miss ? .miss : .refresh
        let client = priority == .miss ? client : nil
        let clientShare = sharedShare(of: client)
        let at = Self.milliseconds(now)
        if let decision = await link.call({ _ in
            try await acquireShared(sharedPriority, at: at, callID: id, share: clientShare)
        }) {
            switch decision {
            case .granted:
                remember(SharedBudget.Call(id: id, at: at), unknownToTheFleet: false)
                local.record(client, now: now)  // should Redis go away within the window
                return .granted
            case .denied(let wait):
                return .denied(retryAfter: max(UpstreamBudget.shortestWait, Double(wait) / 1000))
            case .shareSpent(let wait):
                return .shareSpent(retryAfter: max(UpstreamBudget.shortestWait, Double(wait) / 1000))
            case .unseeded:
                // Started again between this replica's seed and its request: it asks again shortly.
                return .denied(retryAfter: Self.reseedPause)
            }
        }
        let decision = local.acquire(priority, client: client, now: now)
        if decision == .granted { remember(SharedBudget.Call(id: id, at: at), unknownToTheFleet: true) }
        return decision
    }

    func shareWait(for client: String, now: Double) async -> Double? {
        guard let clientShare = sharedShare(of: client) else { return nil }
        if let wait = await link.call({ _ in try await shared.shareWait(clientShare, now: Self.milliseconds(now)) }) {
            return wait.map { Double($0) / 1000 }
        }
        return fairShare.shareWait(for: client, now: now)
    }

    var trackedClients: Int { fairShare.trackedClients }

    func observe(headers: [String: String], now: Double) async -> [String] {
        let ignored = fairShare.observe(headers: headers, now: now)
        let read = UpstreamBudget.read(headers: headers, now: now)
        if read.limit != nil || read.remaining != nil {
            _ = await link.call { _ in
                try await shared.observe(
                    limit: read.limit, remaining: read.remaining, resetAt: read.resetAt.map(Self.milliseconds),
                    now: Self.milliseconds(now))
            }
        }
        return ignored
    }

    func exhaust(for seconds: Double, now: Double) async {
        fairShare.exhaust(for: seconds, now: now)
        let wait = seconds.isFinite ? min(max(0, seconds), UpstreamBudget.longestReset) : UpstreamBudget.longestReset
        let until = Self.milliseconds(now) + Int64(wait * 1000)
        memory.withLock { $0.closedUntil = max($0.closedUntil, until) }
        _ = await link.call { _ in
            try await shared.close(forMilliseconds: Int64(wait * 1000), now: Self.milliseconds(now))
        }
    }

    /// Calls this replica made in the window (the fleet's are in Redis).
    func used(now: Double) -> Int {
        fairShare.used(now: now)
    }

    /// A call from the fleet's window, seeding it first when this replica has not seeded the
    /// one in Redis (or called amodb behind its back), and once more if it was started again.
    private func acquireShared(
        _ priority: SharedBudget.Priority, at: Int64, callID: String, share: SharedBudget.ClientShare?
    ) async throws(RedisError) -> SharedBudget.Decision {
        let known = memory.withLock { $0.mustSeed ? nil : $0.window }
        let window = if let known { known } else { try await seed(at: at) }
        let decision = try await shared.acquire(priority, now: at, callID: callID, window: window, share: share)
        guard case .unseeded = decision else { return decision }
        return try await shared.acquire(priority, now: at, callID: callID, window: try await seed(at: at), share: share)
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
                settleMilliseconds: Int64(link.replicaLifetime * 1000),
                closedUntil: closedUntil > at ? closedUntil : nil, now: at)
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
