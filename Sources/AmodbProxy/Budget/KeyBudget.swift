import Synchronization

/// The one owner of amodb's per-key budget: every call the proxy makes to amodb (a miss, a
/// refresh, a retry after a 429, the probe of a refused key) is granted here, and every
/// answer that bears on the budget (amodb's limit headers, a 429) comes back here.
///
/// **Invariant.** In any 60 s window, the calls all replicas send to amodb are at most
/// `AMODB_RATE_LIMIT` — whatever Redis does (slow, stalled, flushed, restarted,
/// unreachable at start) and whatever amodb and clients do. The parts that keep it:
///
/// - a call counts from when it is granted until a window after it came back: amodb may
///   have received it any time in between; one that got no answer, until a window and a
///   call's time after it was given up: amodb may still read it then (`CallBudget.completed`);
/// - the window (`CallBudget`): one replica's sliding window in memory (`UpstreamBudget`),
///   or the fleet's in Redis (`RedisCallBudget` over `SharedBudget`), which while Redis is
///   away grants nothing that the fleet could already have spent (see `RedisCallBudget`);
/// - the misses-first rule: a refresh takes a call only while the window is at most half
///   spent, a miss may take every call;
/// - each client's share of the calls for misses (`CallerShare`), taken in the same
///   step as the window's call; a miss-only route's misses (a search) take from a smaller
///   share of their own as well, which each replica keeps;
/// - the miss queue (`MissQueue`): misses wait their turn for a call when the window is
///   spent, each client holding no more places than it has calls left;
/// - the 429 pause: when amodb says 429 the window is closed for its `Retry-After` (doubling,
///   bounded, while amodb sends none); when the pause ends, one call goes first (the probe),
///   and the others follow only once it came back other than 429.
final class KeyBudget: Sendable {
    /// The budget's answer to a request for a call, and when the window counted it.
    struct Grant: Sendable, Equatable {
        /// Granted (as a call or the probe), or why not.
        var decision: CallDecision
        /// The time the window was asked at: a granted call counts from then until it comes back.
        var at: Double

        /// Whether a call may be made.
        var isGranted: Bool { decision.isGranted }
    }

    /// The window and the client shares, in memory or in Redis.
    let window: any CallBudget
    private let queue: MissQueue
    /// Each client's share of the calls for misses of a miss-only route (`AMODB_SEARCH_SHARE`),
    /// on top of its client share; kept by this replica; `nil`: none.
    private let missOnlyShare: CallerShare?
    private let clock: any ProxyClock
    private let tasks: BackgroundTasks
    /// 429s in a row without a `Retry-After`: each doubles the pause, up to `longestGuessedPause`.
    private let unexplainedPauses = Mutex(0)

    /// A pause amodb's 429 did not name starts at this many seconds and doubles.
    static let firstGuessedPause: Double = 1
    /// …up to this many.
    static let longestGuessedPause: Double = 60

    /// The budget of `window`, whose misses wait up to `missWait` seconds for a call, at
    /// most `queueCapacity` at once; waits run on `tasks` (woken by shutdown). A miss-only
    /// route's misses take one of `missOnlyShare`'s calls too, when given.
    init(
        window: any CallBudget, missWait: Double, queueCapacity: Int, missOnlyShare: CallerShare? = nil,
        clock: any ProxyClock, tasks: BackgroundTasks
    ) {
        self.window = window
        self.missOnlyShare = missOnlyShare
        self.clock = clock
        self.tasks = tasks
        queue = MissQueue(wait: missWait, capacity: queueCapacity)
    }

    /// Calls per 60 s window at most.
    var limit: Int { window.limit }

    /// A call for a miss of `client` (`nil`: no share applies), with one of its share: at once
    /// if the window has one and nobody waits, else after waiting its turn. A miss of a
    /// miss-only route (`missOnly`) is refused while the client's share of those is spent,
    /// and takes one of it when granted.
    func callForMiss(client: String?, missOnly: Bool = false) async -> Grant {
        let missOnlyShare = missOnly ? self.missOnlyShare : nil
        if let client, let missOnlyShare, let wait = missOnlyShare.standing(of: client, now: clock.now()).wait {
            return Grant(decision: .shareSpent(retryAfter: wait), at: clock.now())
        }
        let (decision, at) = await queue.acquire(from: window, client: client, clock: clock, tasks: tasks)
        if decision.isGranted, let client, let missOnlyShare {
            _ = missOnlyShare.take(client, now: at) { .granted }
        }
        return Grant(decision: decision, at: at)
    }

    /// A call for a refresh nobody waits on (or the probe of a refused key): only from the
    /// window's slack, never waiting. An `overdue` one (an entry past twice its lifetime,
    /// which popular pages must not drift into) goes ahead of the misses waiting instead.
    func callForRefresh(overdue: Bool = false) async -> Grant {
        if overdue {
            let (decision, at) = await queue.acquire(from: window, clock: clock, tasks: tasks, first: true)
            return Grant(decision: decision, at: at)
        }
        let now = clock.now()
        return Grant(decision: await window.acquire(.refresh, now: now), at: now)
    }

    /// What amodb answered to a call this budget granted as `grant`: the call counts from
    /// now (amodb may have received it any time since it was granted), its limit headers are
    /// adopted (returns the names of those ignored), a 429 closes the window for
    /// `retryAfter` (amodb's, or a pause that doubles while it names none) and asks for a
    /// probe when it ends; any other answer to the probe opens the window again.
    /// `pause`: the pause the 429 started, in seconds (`nil` for any other answer).
    func answered(
        status: Int, headers: [String: String], retryAfter: Double?, grant: Grant
    ) async -> (ignored: [String], pause: Double?) {
        let now = clock.now()
        await window.completed(grantedAt: grant.at, now: now, answered: true)
        let ignored = await window.observe(headers: headers, now: now)
        guard status == 429 else {
            unexplainedPauses.withLock { $0 = 0 }
            if grant.decision == .probe { await window.reopen(now: now) }
            return (ignored, nil)
        }
        let pause =
            retryAfter
            ?? unexplainedPauses.withLock { count in
                defer { count += 1 }
                return min(Self.firstGuessedPause * Double(1 << min(count, 16)), Self.longestGuessedPause)
            }
        await window.exhaust(for: pause, now: now)
        return (ignored, pause)
    }

    /// A call granted as `grant` got no answer from amodb (a timeout, a refused connection):
    /// it counts until a call's time from now all the same (amodb may read it after the proxy
    /// gave up), and the probe's turn passes, so that the next call may try.
    func unanswered(grant: Grant) async {
        let now = clock.now()
        await window.completed(grantedAt: grant.at, now: now, answered: false)
        if grant.decision == .probe { await window.reopen(now: now) }
    }

    /// Calls granted in the current window (by this replica, for a fleet's).
    func used(now: Double) -> Int { window.used(now: now) }

    /// Clients whose share this replica holds in memory.
    var trackedClients: Int { window.trackedClients }
}
