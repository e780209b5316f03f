import AmodbCrypto
import AmodbRedis
import Synchronization

/// amodb's budget spent by a fleet of replicas: `SharedBudget` in Redis (one sliding
/// window, a refresh only from its slack, a 429 closing it for every replica and one probe
/// after it, amodb's limit headers binding all) while Redis answers.
///
/// While it does not, this replica must not spend what the fleet may already have spent.
/// It cannot know what the others were granted since its last reply from Redis (a burst on
/// another replica in the last moment before a stall could have spent the whole window), so
/// it assumes the worst the window allows:
/// - **One slow command is not an outage.** A call that fails while Redis is not yet
///   declared lost grants nothing and asks again shortly (`RedisLink.outageStart`: an
///   outage is several failures over a second, or no first reply within a second of start);
///   a miss waits in line meanwhile, within `AMODB_MISS_WAIT`.
/// - **An outage closes this replica's window for a full window and a call's time.** Every
///   call Redis could have granted to anyone was granted before the outage was declared,
///   and reached amodb within `callTimeout` of that, so none is left in amodb's window
///   `callTimeout` + 60 s later; until then this replica calls nothing (misses get `503`
///   with a `Retry-After`, stored answers are served).
/// - **Then a fair part of the limit each.** `AMODB_RATE_LIMIT` divided by the replicas it
///   believes in: the most of `AMODB_FLEET_SIZE` and the replicas it saw alive lately, at
///   most the limit itself (so each has a call). As long as the fleet runs no more replicas
///   than that, the replicas' parts add up to at most the limit.
///
/// The replica remembers the calls it made in the last window, by the ids it gave them,
/// the fleet's calls as it last read them (once a heartbeat), and the window it last
/// seeded. When Redis lost the window (`FLUSHALL`, a restart without persistence) or holds
/// one this replica has not seeded, or when this replica called amodb while Redis was
/// unreachable, it puts all of those back (`SharedBudget.seed`, idempotent by id) before it
/// takes another call: so the calls of a replica killed since are still counted.
///
/// Each client's share of the calls for misses (`clientShare` a window) is the fleet's too:
/// the script that takes a miss's call checks and charges the client's share in the same
/// step, under a key named by a keyed hash of the client (`<prefix>share:<32 hex digits>`),
/// never by what the client sent. While Redis is away, this replica keeps that part of the
/// share that its part of the budget has: `clientShare` divided by the replicas it
/// believes in, at least one call.
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
        /// The fleet's calls in the window as this replica last read them (heartbeat).
        var fleetCalls: [SharedBudget.Call] = []
        /// The probe this replica has out after a 429's pause, if any.
        var probe: String?
    }

    /// Calls per 60 s window for the whole fleet (`AMODB_RATE_LIMIT`).
    let limit: Int
    /// Calls each client may cause per window for misses, across the fleet; `nil`: no share limit.
    let clientShare: Int?
    /// The most replicas the operator runs (`AMODB_FLEET_SIZE`): while Redis is away, this
    /// replica's part of the limit is at most the limit divided by this.
    let fleetSize: Int
    /// The longest a call to amodb can take, in seconds: a call granted before an outage may
    /// reach amodb that much later, and a probe after a 429's pause is out that long at most.
    let callTimeout: Double
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
    /// the share keys are named under a key derived from `amodbKey`. `fleetSize`: the most
    /// replicas the operator runs; `callTimeout`: the longest a call to amodb can take (a probe after a 429 is out that long at most).
    init(
        limit: Int, clientShare: Int?, link: RedisLink, clock: any ProxyClock, amodbKey: Secret,
        fleetSize: Int = RedisCallBudget.defaultFleetSize, callTimeout: Double = 30
    ) {
        self.limit = max(1, limit)
        self.clientShare = clientShare.map { max(1, $0) }
        self.fleetSize = max(1, fleetSize)
        self.callTimeout = max(1, callTimeout)
        self.link = link
        self.clock = clock
        clientNames = HMACSHA256(derivedFrom: Array(amodbKey.revealed.utf8), purpose: Self.clientNamePurpose)
        shared = SharedBudget(client: link.client, prefix: link.prefix, limit: limit)
        let believed = Self.believedReplicas(limit: self.limit, fleetSize: self.fleetSize, seen: 1)
        share = Mutex(
            (
                believed,
                Self.fairShare(
                    of: self.limit, clientShare: self.clientShare, replicas: believed, callTimeout: callTimeout)
            ))
        link.onEveryBeat { [weak self] in await self?.reconcile() }
    }

    /// `AMODB_FLEET_SIZE` when not set: more replicas than a small team runs, so that a
    /// fleet that never set it stays within the limit while Redis is away.
    static let defaultFleetSize = 8

    /// The replicas a replica believes in while Redis is away: the most of the fleet's size
    /// and those it saw alive, at most `limit` (so each has a call of its own).
    static func believedReplicas(limit: Int, fleetSize: Int, seen: Int) -> Int {
        min(max(1, limit), max(fleetSize, seen, 1))
    }

    /// What the amodb key is turned into the share keys' key with: a key derived for one purpose serves no other.
    private static let clientNamePurpose = "amodb-proxy client share key v1"

    /// This replica's share now, resized when the replicas it believes in changed. A resize
    /// loses only what the outage's closing covers (the calls Redis granted, the 429's pause
    /// is kept in Redis and in `Memory`): it happens while Redis answers, never during an outage.
    private var fairShare: UpstreamBudget {
        let replicas = Self.believedReplicas(limit: limit, fleetSize: fleetSize, seen: link.replicasRecently)
        return share.withLock { share in
            if share.replicas != replicas {
                share = (
                    replicas,
                    Self.fairShare(of: limit, clientShare: clientShare, replicas: replicas, callTimeout: callTimeout)
                )
            }
            return share.budget
        }
    }

    /// One replica's part of the budget, and of each client's share, among `replicas`: at least one call of each.
    private static func fairShare(of limit: Int, clientShare: Int?, replicas: Int, callTimeout: Double)
        -> UpstreamBudget
    {
        let replicas = max(1, replicas)
        return UpstreamBudget(
            limit: max(1, limit / replicas),
            shares: clientShare.map { CallerShare(callsPerWindow: max(1, $0 / replicas)) },
            probeTimeout: callTimeout)
    }

    /// `client`'s share in Redis: its key is the first 16 bytes of a keyed hash of the client,
    /// so neither its length nor its characters are the client's to choose.
    private func sharedShare(of client: String?) -> SharedBudget.Share? {
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
            case .granted, .probe:
                remember(SharedBudget.Call(id: id, at: at), unknownToTheFleet: false)
                local.record(client, now: now)  // should Redis go away within the window
                guard decision == .probe else { return .granted }
                memory.withLock { $0.probe = id }
                return .probe
            case .denied(let wait):
                return .denied(retryAfter: max(UpstreamBudget.shortestWait, Double(wait) / 1000))
            case .shareSpent(let wait):
                return .shareSpent(retryAfter: max(UpstreamBudget.shortestWait, Double(wait) / 1000))
            case .unseeded:
                // Started again between this replica's seed and its request: it asks again shortly.
                return .denied(retryAfter: Self.reseedPause)
            }
        }
        // Redis did not answer. Until the outage is declared, nothing is granted: one slow
        // command must not send this replica spending on its own.
        guard let lost = link.outageStart() else { return .denied(retryAfter: Self.uncertainPause) }
        // Whatever Redis granted anyone was granted before `lost`, and reached amodb within a
        // call's time of that: none of it is left in amodb's window a window later.
        local.close(until: lost + callTimeout + UpstreamBudget.window)
        let decision = local.acquire(priority, client: client, now: now)
        if decision.isGranted { remember(SharedBudget.Call(id: id, at: at), unknownToTheFleet: true) }
        if decision == .probe { memory.withLock { $0.probe = nil } }
        return decision
    }

    func shareStanding(for client: String, now: Double) async -> ShareStanding? {
        guard let clientShare = sharedShare(of: client) else { return nil }
        if let standing = await link.call({ _ in try await shared.standing(clientShare, now: Self.milliseconds(now)) })
        {
            return ShareStanding(left: standing.left, wait: standing.wait.map { Double($0) / 1000 })
        }
        return fairShare.shareStanding(for: client, now: now)
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
        memory.withLock { memory in
            memory.closedUntil = max(memory.closedUntil, until)
            memory.probe = nil
        }
        _ = await link.call { _ in
            try await shared.close(forMilliseconds: Int64(wait * 1000), now: Self.milliseconds(now))
        }
    }

    func completed(grantedAt: Double, now: Double) async {
        fairShare.completed(grantedAt: grantedAt, now: now)
        let granted = Self.milliseconds(grantedAt)
        let at = max(granted, Self.milliseconds(now))
        let id = memory.withLock { memory -> String? in
            guard let index = memory.calls.lastIndex(where: { $0.at == granted }) else { return nil }
            memory.calls[index].at = at
            return memory.calls[index].id
        }
        guard let id else { return }
        // Should Redis not hear of it, the next seed puts the call back at its later time.
        if await link.call({ _ in try await shared.complete(id, at: at) }) == nil {
            memory.withLock { $0.mustSeed = true }
        }
    }

    func reopen(now: Double) async {
        fairShare.reopen(now: now)
        guard
            let probe = memory.withLock({ memory in
                defer { memory.probe = nil }
                return memory.probe
            })
        else {
            return
        }
        _ = await link.call { _ in try await shared.reopen(probe: probe, now: Self.milliseconds(now)) }
    }

    /// Calls this replica made in the window (the fleet's are in Redis).
    func used(now: Double) -> Int {
        fairShare.used(now: now)
    }

    /// A call from the fleet's window, seeding it first when this replica has not seeded the
    /// one in Redis (or called amodb behind its back), and once more if it was started again.
    private func acquireShared(
        _ priority: SharedBudget.Priority, at: Int64, callID: String, share: SharedBudget.Share?
    ) async throws(RedisError) -> SharedBudget.Decision {
        let known = memory.withLock { $0.mustSeed ? nil : $0.window }
        let window = if let known { known } else { try await seed(at: at) }
        let probe = Int64(callTimeout * 1000)
        let decision = try await shared.acquire(
            priority, now: at, callID: callID, window: window, share: share, probeMilliseconds: probe)
        guard case .unseeded = decision else { return decision }
        return try await shared.acquire(
            priority, now: at, callID: callID, window: try await seed(at: at), share: share, probeMilliseconds: probe)
    }

    /// Once a heartbeat: reads the fleet's calls in the window, and seeds the window in
    /// Redis if it is not the one this replica seeded (lost, started again) or this replica
    /// called amodb without it.
    private func reconcile() async {
        let at = Self.milliseconds(clock.now())
        let (known, mustSeed) = memory.withLock { ($0.window, $0.mustSeed) }
        _ = await link.call { _ in
            let current = try await shared.windowState(now: at)
            if !current.calls.isEmpty { memory.withLock { $0.fleetCalls = current.calls } }
            if mustSeed || current.since == nil || current.since != known { _ = try await seed(at: at) }
        }
    }

    /// Puts this replica's calls of the window ending at `at` back into the fleet's window;
    /// returns that window. Should it fail, the next call seeds again.
    private func seed(at: Int64) async throws(RedisError) -> Int64 {
        let (calls, closedUntil, hadWindow) = memory.withLock { memory in
            memory.mustSeed = false
            memory.calls.removeAll { $0.at <= at - shared.windowMilliseconds }
            memory.fleetCalls.removeAll { $0.at <= at - shared.windowMilliseconds }
            // Its own calls and the fleet's as last read, each once, the newest `limit`.
            var seen = Set(memory.calls.map(\.id))
            let all = (memory.calls + memory.fleetCalls.filter { seen.insert($0.id).inserted }).sorted { $0.at < $1.at }
            return (Array(all.suffix(limit)), memory.closedUntil, memory.window != nil)
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

    /// How long a miss waits before asking again when Redis failed but is not yet declared lost, in seconds.
    static let uncertainPause = 0.1

    private static func milliseconds(_ seconds: Double) -> Int64 {
        Int64((seconds * 1000).rounded())
    }
}
