/// Who asks the budget for a call.
///
/// A stale entry can still be answered and a miss has nothing to answer with, so when the
/// window is tight the calls go to misses: a refresh waits for slack while its entry is
/// served stale.
package enum CallPriority: Sendable {
    /// Nobody waits on it (a refresh of a stale entry served meanwhile, a probe of a
    /// refused key): only from slack, while the window is at most half spent.
    case refresh
    /// A client waits on it (a miss, its retries after a 429, a refresh of an entry older
    /// than twice its lifetime): may use every call of the window.
    case miss
}

/// The budget's answer to a request for one call.
package enum CallDecision: Sendable, Equatable {
    case granted
    /// Granted as the one call that tries amodb when a 429's pause ends: no other call is
    /// granted until it comes back (`CallBudget.reopen`) or its time runs out.
    case probe
    /// No call now; one may be possible after this many seconds.
    case denied(retryAfter: Double)
    /// The client's share of the window's calls for misses is spent: no call taken from the
    /// window; one of the client's calls leaves it after this many seconds.
    case shareSpent(retryAfter: Double)
    /// The fleet's window cannot be read or is not to be trusted (`PauseReason`), and this
    /// replica's reserve has no call: none for this many seconds (a guess, for Redis unreachable).
    case paused(PauseReason, retryAfter: Double)

    /// Whether a call may be made.
    var isGranted: Bool { self == .granted || self == .probe }

    /// How long until a call may be had, for a decision a miss may wait out in line.
    var wait: Double? {
        switch self {
        case .denied(let retryAfter), .paused(_, let retryAfter): retryAfter
        case .granted, .probe, .shareSpent: nil
        }
    }
}

/// Why calls to amodb are paused although the key's window may have calls left: the fleet's
/// window, which vouches for what every replica spent, cannot be read or was lost, so only
/// what is provably free (this replica's outage reserve) may be spent.
package enum PauseReason: String, Sendable, Equatable, CaseIterable {
    /// This replica cannot reach Redis.
    case redisUnreachable = "redis_unreachable"
    /// The fleet's window was lost, or may be older than what the replicas saw: nothing is
    /// granted from it until a full window and a call's time have passed since the loss.
    case budgetLost = "budget_lost"
    /// The fleet's window was just started by a replica that remembers none (a new fleet):
    /// it settles for a few seconds, so a replica that remembers a lost one can say so first.
    case budgetStarting = "budget_starting"
}

/// Where a client's share of the calls for misses stands.
struct ShareStanding: Sendable, Equatable {
    /// Calls the client may still cause in the window now.
    var left: Int
    /// Seconds until one of its calls leaves the window, when it has none left.
    var wait: Double?
}

/// The window of amodb's per-key calls that `KeyBudget` spends from. Behind a protocol so a
/// shared implementation (Redis, for several replicas spending one key) can take the
/// in-memory `UpstreamBudget`'s place; nothing but `KeyBudget` asks it for a call.
/// Asked only on misses and refreshes, never on a cache hit.
///
/// A budget also keeps each client's share of the window's calls for misses
/// (`AMODB_CLIENT_SHARE`): a miss's call and its client's share are taken in one step, so
/// a miss the share refuses takes no call, and one the window refuses costs no share. The
/// forwarder asks only after it knows it must call (no other replica's fill answered), so
/// nothing is ever given back.
///
/// Taking a call, adopting amodb's headers and a 429 are `async`: a shared implementation
/// asks Redis (tens of milliseconds at most), on a miss's or a refresh's task. The in-memory
/// one answers them synchronously, so it costs nothing more than before.
protocol CallBudget: Sendable {
    /// Calls per 60 s window at most.
    var limit: Int { get }
    /// Takes one call from the window, or says how long until one could be had; for a miss
    /// of a `client`, one call of its share with it, in the same step (`.shareSpent` when
    /// the share has none). `client` is `nil` for those no share limits.
    func acquire(_ priority: CallPriority, client: String?, now: Double) async -> CallDecision
    /// Where `client`'s share stands, or `nil` when no share applies; takes nothing.
    func shareStanding(for client: String, now: Double) async -> ShareStanding?
    /// Adopts amodb's rate-limit headers (lower-cased names); returns the names of those
    /// it ignored as unreadable or out of range.
    func observe(headers: [String: String], now: Double) async -> [String]
    /// amodb said 429: no calls for `seconds`, then one probe (`CallDecision.probe`) before any other.
    func exhaust(for seconds: Double, now: Double) async
    /// The probe came back other than 429 (or not at all): calls are granted as before the pause.
    func reopen(now: Double) async
    /// The call granted at `grantedAt` came back at `now` (`answered`), or was given up then
    /// with no answer. amodb may have received an answered call any time in between, so from
    /// now on it counts as made at `now`. A call given up may still reach amodb after that
    /// (its bytes held in a slow network or in amodb's own queue are read once the proxy has
    /// closed the connection), so it counts as made a call's time later. So the window never
    /// lets a call go whose 60 s at amodb could still hold the limit's calls.
    func completed(grantedAt: Double, now: Double, answered: Bool) async
    /// Calls granted in the current window (by this replica, for a shared budget).
    func used(now: Double) -> Int
    /// Clients whose share this replica holds in memory.
    var trackedClients: Int { get }
    /// Why calls from the fleet's window are paused at `now`, and until when (seconds; a
    /// guess for an unreachable Redis); `nil` while they are not (always, for one replica's window).
    func pause(now: Double) -> (reason: PauseReason, until: Double)?
}

extension CallBudget {
    func pause(now: Double) -> (reason: PauseReason, until: Double)? { nil }

    /// Takes one call from the window, for no client's share.
    func acquire(_ priority: CallPriority, now: Double) async -> CallDecision {
        await acquire(priority, client: nil, now: now)
    }
}
