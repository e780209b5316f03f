import AmodbCrypto
import AmodbRedis
import Synchronization

/// amodb's budget spent by a fleet of replicas: the fleet's window in Redis
/// (`SharedBudget`), and an outage reserve each replica spends on its own.
///
/// **The split.** Of `AMODB_RATE_LIMIT` calls a minute, the fleet's window grants at most
/// the limit less the reserve (`AMODB_BUDGET_RESERVE`); the reserve is divided among the
/// `AMODB_FLEET_SIZE` replicas, and each replica's part is a sliding window of its own, in
/// its memory and its ledger (`CallLedger`), that the fleet's window never grants from. So
/// whatever any replica sees of Redis, the calls are at most
/// (limit − reserve) from the fleet's window + `fleetSize` × (reserve / `fleetSize`) = the
/// limit, as long as no more than `AMODB_FLEET_SIZE` replicas run.
///
/// **When the fleet's window cannot be trusted, only the reserve is spent:**
/// - Redis does not answer (an outage, a stall, a partition of this replica alone): the
///   reserve at once, from the first failed command; nothing from the fleet's window, which
///   the others may have spent to the last call.
/// - The window was lost or rolled back (`SharedBudget`: flushed, evicted, deleted, a
///   restart, an older snapshot, a failover): the script grants nothing from it until a
///   window and a call's time after the loss; the reserve meanwhile.
/// - A window just started by a new fleet settles for a replica's lifetime; the reserve meanwhile.
/// With no reserve (`AMODB_BUDGET_RESERVE=0`, or fewer calls than replicas), such a replica
/// makes no call: its misses get `503` naming why (`CallDecision.paused`), and stored
/// answers are served, stale ones included.
///
/// The reserve's calls are put back into the fleet's window once a heartbeat while Redis
/// answers (idempotent by id), so the fleet's window also knows them; the reserve itself
/// frees only as its own calls age out, whatever Redis says.
///
/// The replica also remembers (in memory and in its ledger) the fleet's window as it last
/// saw it, its epoch and sequence number, and passes it with every request: that is how a
/// window lost or rolled back is told from a new one (`SharedBudget`).
///
/// Each client's share of the calls for misses (`clientShare` a window) is the fleet's too,
/// checked and charged by the script with the call, under a key named by a keyed hash of the
/// client (`<prefix>share:<32 hex digits>`). The reserve keeps each client to the same part
/// of its own calls.
final class RedisCallBudget: CallBudget {
    /// A call this replica made, until it leaves the window.
    private struct Call {
        /// When it counts from (its grant, then its answer), on this replica's clock.
        var at: Double
        /// Its id in the fleet's window (`nil`: from the reserve).
        var fleetID: String?
    }

    /// What this replica remembers of the fleet's window.
    private struct Memory {
        /// The window as last seen.
        var seen = SharedBudget.Seen.nothing
        /// Its calls in the last window, oldest first.
        var calls: [Call] = []
        /// Until when (this clock) amodb's last 429 closed the window.
        var closedUntil: Double = 0
        /// The probe this replica has out after a 429's pause, if any.
        var probe: String?
        /// Why the fleet's window grants nothing, and until when (this clock), as last heard.
        var pause: (reason: PauseReason, until: Double)?
        /// Whether the last request to Redis failed (unreachable, or an error reply such as
        /// an out-of-memory one): misses are then on the reserve alone.
        var failing = false
        /// Whether more replicas than `AMODB_FLEET_SIZE` were seen (warned once).
        var overFleetSize = false
    }

    /// Calls per 60 s window for the whole fleet (`AMODB_RATE_LIMIT`).
    let limit: Int
    /// Calls each client may cause per window for misses, across the fleet; `nil`: no share limit.
    let clientShare: Int?
    /// The most replicas the operator runs (`AMODB_FLEET_SIZE`).
    let fleetSize: Int
    /// This replica's part of the outage reserve, in calls per window.
    let reservePerReplica: Int
    /// The longest a call to amodb can take, in seconds.
    let callTimeout: Double
    /// Names a client's share key: the same name in every replica holding the amodb key.
    private let clientNames: HMACSHA256
    private let shared: SharedBudget
    private let reserve: UpstreamBudget
    private let ledger: CallLedger?
    private let link: RedisLink
    private let clock: any ProxyClock
    private let memory: Mutex<Memory>
    private let counter = Atomic<Int>(0)
    private let logger: ProxyLogger?

    /// A budget of `limit` calls a minute for every replica using `link`'s prefix, on `clock`,
    /// with `clientShare` of them a window for each client's misses (`nil`: no share limit);
    /// the share keys are named under a key derived from `amodbKey`. `fleetSize`: the most
    /// replicas the operator runs; `reserve`: the calls a window kept for replicas that cannot
    /// use the fleet's window (`nil`: `defaultReserve`); `callTimeout`: the longest a call to
    /// amodb can take; `ledger`: where this replica's calls survive a restart.
    init(
        limit: Int, clientShare: Int?, link: RedisLink, clock: any ProxyClock, amodbKey: Secret,
        fleetSize: Int = RedisCallBudget.defaultFleetSize, reserve: Int? = nil, callTimeout: Double = 30,
        ledger: CallLedger? = nil, settle: Double? = nil, logger: ProxyLogger? = nil
    ) {
        self.logger = logger
        self.limit = max(1, limit)
        self.clientShare = clientShare.map { max(1, $0) }
        self.fleetSize = max(1, fleetSize)
        self.callTimeout = max(1, callTimeout)
        let perReplica = Self.reservePerReplica(
            limit: self.limit, fleetSize: self.fleetSize,
            reserve: reserve ?? Self.defaultReserve(limit: self.limit, fleetSize: self.fleetSize))
        reservePerReplica = perReplica
        self.link = link
        self.clock = clock
        self.ledger = ledger
        clientNames = HMACSHA256(derivedFrom: Array(amodbKey.revealed.utf8), purpose: Self.clientNamePurpose)
        shared = SharedBudget(
            client: link.client, prefix: link.prefix, limit: self.limit - perReplica * self.fleetSize,
            callTimeoutMilliseconds: Self.milliseconds(self.callTimeout),
            settleMilliseconds: Self.milliseconds(settle ?? link.heartbeatInterval * Self.settleBeats))
        let now = clock.now()
        let whole = self.limit
        self.reserve = UpstreamBudget(
            limit: perReplica,
            shares: clientShare.map { CallerShare(callsPerWindow: max(1, $0 * perReplica / whole)) },
            callTimeout: self.callTimeout, ledger: ledger, reserve: true, now: now)
        memory = Mutex(Memory(seen: ledger?.loaded.seen ?? .nothing))
        link.onEveryBeat { [weak self] in await self?.reconcile() }
    }

    /// How long a window started by a replica that remembers none settles, in heartbeats:
    /// every replica that remembers a window asks Redis once a beat, so one of them would
    /// have marked the new window lost by then. Short enough that the first miss of a new
    /// fleet waits it out within `AMODB_MISS_WAIT`; a fleet's first beat starts it.
    static let settleBeats = 1.5

    /// `AMODB_FLEET_SIZE` when not set: more replicas than a small team runs.
    static let defaultFleetSize = 8

    /// `AMODB_BUDGET_RESERVE` when not set: a fifth of the limit, so that a replica cut off
    /// from Redis (or a fleet whose window was lost) still serves some misses, at the price of
    /// a fifth of the limit never granted from the fleet's window.
    static func defaultReserve(limit: Int, fleetSize: Int) -> Int {
        limit / 5
    }

    /// Each replica's whole calls of `reserve` (what does not divide evenly stays with the
    /// fleet's window), leaving the fleet's window at least one call.
    static func reservePerReplica(limit: Int, fleetSize: Int, reserve: Int) -> Int {
        let perReplica = max(0, min(reserve, limit - 1)) / max(1, fleetSize)
        return perReplica
    }

    /// What the amodb key is turned into the share keys' key with: a key derived for one purpose serves no other.
    private static let clientNamePurpose = "amodb-proxy client share key v1"

    /// How long a miss refused because Redis is unreachable is told to wait, in seconds: a
    /// guess, as nobody knows when Redis comes back.
    static let unreachableRetry: Double = 2

    /// `client`'s share in Redis: its key is the first 16 bytes of a keyed hash of the client,
    /// so neither its length nor its characters are the client's to choose.
    private func sharedShare(of client: String?) -> SharedBudget.Share? {
        guard let client, let clientShare else { return nil }
        return shared.share(named: clientNames.hexCode(for: Array(client.utf8), bytes: 16), calls: clientShare)
    }

    func acquire(_ priority: CallPriority, client: String?, now: Double) async -> CallDecision {
        let id = link.replicaID + ":" + String(counter.add(1, ordering: .relaxed).newValue)
        let sharedPriority: SharedBudget.Priority = priority == .miss ? .miss : .refresh
        let client = priority == .miss ? client : nil
        let clientShare = sharedShare(of: client)
        let seen = memory.withLock { $0.seen }
        let probe = Self.milliseconds(callTimeout)
        guard
            let (decision, nowSeen) = await link.call({ _ in
                try await shared.acquire(
                    sharedPriority, callID: id, seen: seen, replica: link.replicaID, share: clientShare,
                    probeMilliseconds: probe)
            })
        else {
            memory.withLock { $0.failing = true }
            return fromReserve(priority, client: client, now: now, else: .redisUnreachable, Self.unreachableRetry)
        }
        if case .paused(let pause, let wait) = decision {
            let reason: PauseReason = pause == .lost ? .budgetLost : .budgetStarting
            saw(nowSeen, pause: (reason, now + Self.seconds(wait)), now: now)
            return fromReserve(priority, client: client, now: now, else: reason, Self.seconds(wait))
        }
        saw(nowSeen, pause: nil, now: now)
        switch decision {
        case .granted, .probe:
            ledger?.granted(id, until: now + callTimeout, reserve: false)
            memory.withLock { memory in
                memory.calls.append(Call(at: now, fleetID: id))
                if decision == .probe { memory.probe = id }
            }
            return decision == .probe ? .probe : .granted
        case .denied(let wait):
            return .denied(retryAfter: Self.seconds(wait))
        case .shareSpent(let wait):
            return .shareSpent(retryAfter: Self.seconds(wait))
        case .paused:
            return .paused(.budgetLost, retryAfter: Self.unreachableRetry)  // answered above
        }
    }

    /// A call from this replica's reserve, or the pause for `reason` (the sooner of `wait`
    /// and the reserve's next call) when it has none.
    private func fromReserve(
        _ priority: CallPriority, client: String?, now: Double, else reason: PauseReason, _ wait: Double
    ) -> CallDecision {
        let decision = reserve.acquire(priority, client: client, now: now)
        switch decision {
        case .granted, .probe:
            memory.withLock { $0.calls.append(Call(at: now, fleetID: nil)) }
            return decision
        case .shareSpent:
            return decision
        case .denied(let reserveWait) where reservePerReplica > 0:
            return .paused(reason, retryAfter: max(UpstreamBudget.shortestWait, min(wait, reserveWait)))
        case .denied, .paused:
            return .paused(reason, retryAfter: max(UpstreamBudget.shortestWait, wait))
        }
    }

    func shareStanding(for client: String, now: Double) async -> ShareStanding? {
        guard let clientShare = sharedShare(of: client) else { return nil }
        if let standing = await link.call({ _ in try await shared.standing(clientShare) }) {
            return ShareStanding(left: standing.left, wait: standing.wait.map(Self.seconds))
        }
        return reserve.shareStanding(for: client, now: now)
    }

    var trackedClients: Int { reserve.trackedClients }

    func observe(headers: [String: String], now: Double) async -> [String] {
        let ignored = reserve.observe(headers: headers, now: now)
        let read = UpstreamBudget.read(headers: headers, now: now)
        if read.limit != nil || read.remaining != nil {
            _ = await link.call { _ in
                try await shared.observe(
                    limit: read.limit, remaining: read.remaining,
                    resetMilliseconds: read.resetAt.map { Self.milliseconds(max(0, $0 - now)) })
            }
        }
        return ignored
    }

    func exhaust(for seconds: Double, now: Double) async {
        reserve.exhaust(for: seconds, now: now)
        let wait = seconds.isFinite ? min(max(0, seconds), UpstreamBudget.longestReset) : UpstreamBudget.longestReset
        memory.withLock { memory in
            memory.closedUntil = max(memory.closedUntil, now + wait)
            memory.probe = nil
        }
        _ = await link.call { _ in try await shared.close(forMilliseconds: Self.milliseconds(wait)) }
    }

    func completed(grantedAt: Double, now: Double, answered: Bool) async {
        let later = answered ? 0 : callTimeout
        let at = max(grantedAt, now + later)
        let fleetID = memory.withLock { memory -> String?? in
            guard let index = memory.calls.lastIndex(where: { $0.at == grantedAt }) else { return nil }
            memory.calls[index].at = at
            return .some(memory.calls[index].fleetID)
        }
        guard let fleetID else { return }
        guard let fleetID else {
            reserve.completed(grantedAt: grantedAt, now: now, answered: answered)
            return
        }
        ledger?.completed(fleetID, at: at)
        // Should Redis not hear of it, the call counts until its grant's end there: later, never earlier.
        _ = await link.call { _ in try await shared.complete(fleetID, laterMilliseconds: Self.milliseconds(later)) }
    }

    func reopen(now: Double) async {
        reserve.reopen(now: now)
        guard
            let probe = memory.withLock({ memory in
                defer { memory.probe = nil }
                return memory.probe
            })
        else {
            return
        }
        _ = await link.call { _ in try await shared.reopen(probe: probe) }
    }

    /// Calls this replica made in the window, from the fleet's window and its reserve.
    func used(now: Double) -> Int {
        memory.withLock { memory in
            memory.calls.removeAll { $0.at <= now - UpstreamBudget.window }
            return memory.calls.count
        }
    }

    func pause(now: Double) -> (reason: PauseReason, until: Double)? {
        if link.outageStart() != nil { return (.redisUnreachable, now + Self.unreachableRetry) }
        return memory.withLock { memory in
            if memory.failing { return (.redisUnreachable, now + Self.unreachableRetry) }
            // Not yet told of any window (a replica's first beat is on its way): nothing is
            // granted from one before it is.
            if memory.seen.epoch.isEmpty { return (.budgetStarting, now + link.heartbeatInterval) }
            guard let pause = memory.pause, pause.until > now else { return nil }
            return pause
        }
    }

    /// Once a heartbeat: checks the fleet's window against what this replica saw (so a loss
    /// is marked even while no miss asks), puts back the reserve's calls and a 429's close
    /// this replica keeps.
    private func reconcile() async {
        let now = clock.now()
        let (seen, closed) = memory.withLock { ($0.seen, $0.closedUntil) }
        let putBack = reserve.calls(now: now).map {
            SharedBudget.PutBack(id: $0.id, ageMilliseconds: Self.milliseconds(now - $0.at))
        }
        guard
            let state = await link.call({ _ in
                try await shared.window(
                    seen: seen, replica: link.replicaID, putBack: putBack,
                    closedMilliseconds: closed > now ? Self.milliseconds(closed - now) : 0)
            })
        else {
            memory.withLock { $0.failing = true }
            return
        }
        warnIfOverFleetSize()
        let reason = state.pause.map { $0 == .lost ? PauseReason.budgetLost : .budgetStarting }
        saw(state.seen, pause: reason.map { ($0, now + Self.seconds(state.wait)) }, now: now)
    }

    /// Logs once that more replicas beat than `AMODB_FLEET_SIZE` says run: their reserves
    /// together may then pass what the fleet's window keeps for them.
    private func warnIfOverFleetSize() {
        let seen = link.replicas
        guard seen > fleetSize, reservePerReplica > 0 else { return }
        let first = memory.withLock { memory -> Bool in
            defer { memory.overFleetSize = true }
            return !memory.overFleetSize
        }
        guard first else { return }
        logger?.warning(
            "more replicas share this Redis than AMODB_FLEET_SIZE says: their outage reserves together may pass the key's limit; raise AMODB_FLEET_SIZE to at least the replicas you run",
            ["replicas": String(seen), "fleet_size": String(fleetSize)])
    }

    /// Remembers what Redis said of the window now: paused (a pause newly heard of is logged
    /// once), or not.
    private func saw(_ seen: SharedBudget.Seen, pause: (reason: PauseReason, until: Double)?, now: Double) {
        let began = memory.withLock { memory -> Bool in
            memory.failing = false
            memory.seen = seen
            let was = memory.pause?.reason
            memory.pause = pause
            return pause != nil && was != pause?.reason
        }
        ledger?.saw(seen)
        guard began, let pause else { return }
        let seconds = String(Int((pause.until - now).rounded(.up)))
        switch pause.reason {
        case .budgetLost:
            logger?.warning(
                "the fleet's budget in Redis was lost or is older than what replicas saw (flushed, evicted, restarted, failed over): calls to amodb only from the outage reserve until a window has passed",
                ["resume_in": seconds, "reserve": String(reservePerReplica)])
        case .budgetStarting:
            logger?.info(
                "the fleet's budget in Redis is new: settling before it grants, so a replica that remembers a lost one can say so",
                ["resume_in": seconds])
        case .redisUnreachable:
            break
        }
    }

    private static func milliseconds(_ seconds: Double) -> Int64 {
        Int64((seconds * 1000).rounded())
    }

    private static func seconds(_ milliseconds: Int64) -> Double {
        max(UpstreamBudget.shortestWait, Double(milliseconds) / 1000)
    }
}
