import Synchronization

/// Misses waiting for a call once the window is spent: first come, first served, each for
/// at most `wait` seconds, at most `capacity` at once. A burst that fits within a couple
/// of seconds of budget is then served, not refused; beyond the bound a miss is refused at
/// once, so a flood of new paths cannot hold connections open for nothing.
///
/// Only the head of the queue asks the budget, when the call it was told of should have
/// freed; the others sleep until they are the head or their wait is over. A miss that
/// arrives while others wait joins the end of the queue without asking, so it cannot take
/// the call the head waits for; only its client's share is looked at first, so a client
/// with no call left is refused at once. A miss its client's share refuses never waits: the
/// share frees far later than any wait.
///
/// The queue is fair: a client holds at most as many places as it has calls left in its
/// share, and never more than `placesPerClient`, so no few clients can fill it and lock the
/// others out. A miss refused for want of a place is told to retry once the misses ahead
/// of it have had their answers (`wait`).
final class MissQueue: Sendable {
    private struct State {
        /// The waiting misses' sleeper ids, oldest first.
        var waiting: [UInt64] = []
        /// Places held by each client that has any.
        var places: [String: Int] = [:]
    }

    /// Seconds a miss waits for a call at most (`AMODB_MISS_WAIT`; 0: none waits).
    let wait: Double
    /// Misses waiting at once, at most.
    let capacity: Int
    /// Places one client may hold at once, at most: a fixed part of the queue.
    let placesPerClient: Int
    private let state = Mutex(State())

    /// The part of the queue one client may hold: a sixteenth.
    static let clientPart = 16

    /// A queue where misses wait `wait` seconds at most, `capacity` of them at once.
    init(wait: Double, capacity: Int = 256) {
        self.wait = max(0, wait)
        self.capacity = max(1, capacity)
        placesPerClient = max(1, self.capacity / Self.clientPart)
    }

    /// Misses waiting now.
    var count: Int { state.withLock { $0.waiting.count } }

    /// A call for a miss from `budget`, with one of `client`'s share: at once if the window
    /// has one and nobody waits, else after waiting in turn for one, within `wait` seconds of
    /// `clock`'s time. `first`: ahead of those waiting (a refresh of an entry drifting past
    /// twice its lifetime). `at`: the time the window was asked at, which a granted call counts from.
    func acquire(
        from budget: any CallBudget, client: String? = nil, clock: any ProxyClock, tasks: BackgroundTasks,
        first: Bool = false
    ) async -> (decision: CallDecision, at: Double) {
        let start = clock.now()
        let deadline = start + wait
        // Refused for want of a place: the misses ahead will have had their answers by then.
        let noPlace = CallDecision.denied(retryAfter: max(1, wait))
        var decision = noPlace
        // Places this client may hold: its calls left, within its part of the queue.
        var allowed = placesPerClient
        let asked = wait == 0 || first || state.withLock({ $0.waiting.isEmpty })
        if asked {
            decision = await budget.acquire(.miss, client: client, now: start)
            // No wait, or the call frees after the wait would be over: refused now.
            guard let retryAfter = decision.wait, wait > 0, start + retryAfter <= deadline else {
                return (decision, start)
            }
        } else if let client, let standing = await budget.shareStanding(for: client, now: start) {
            if let spent = standing.wait { return (.shareSpent(retryAfter: spent), start) }
            allowed = min(allowed, standing.left)
        }
        let id = tasks.makeSleeperID()
        let joined = state.withLock { state -> Bool in
            guard state.waiting.count < capacity else { return false }
            if let client {
                let held = state.places[client, default: 0]
                guard held < allowed else { return false }
                state.places[client] = held + 1
            }
            if first { state.waiting.insert(id, at: 0) } else { state.waiting.append(id) }
            return true
        }
        guard joined else { return (decision, start) }
        defer { leave(id, client: client, tasks: tasks) }
        // The head asks when the call it was told of frees; one that joined without asking, at once.
        var nextTry = start
        if asked, let retryAfter = decision.wait { nextTry = start + retryAfter }
        // The time waited so far: the clock's, or the sleeps that ran their course, whichever
        // is more (a clock a test holds still does not make a miss wait for ever).
        var slept: Double = 0
        while true {
            let now = max(clock.now(), start + slept)
            if isHead(id), now >= nextTry {
                let asking = clock.now()
                decision = await budget.acquire(.miss, client: client, now: asking)
                guard let retryAfter = decision.wait else { return (decision, asking) }
                nextTry = now + retryAfter
                if nextTry > deadline { return (decision, asking) }
            }
            if now >= deadline { return (decision, now) }
            let nap = (isHead(id) ? min(nextTry, deadline) : deadline) - now
            switch await tasks.sleep(nap, as: id) {
            case .timer: slept = now - start + nap
            case .early: continue
            case .stopping: return (decision, now)
            }
        }
    }

    private func isHead(_ id: UInt64) -> Bool {
        state.withLock { $0.waiting.first == id }
    }

    /// Leaves the queue; when the head leaves, the next one becomes the head and is woken
    /// to ask the budget itself.
    private func leave(_ id: UInt64, client: String?, tasks: BackgroundTasks) {
        let next = state.withLock { state -> UInt64? in
            guard let index = state.waiting.firstIndex(of: id) else { return nil }
            state.waiting.remove(at: index)
            if let client, let held = state.places[client] {
                state.places[client] = held > 1 ? held - 1 : nil
            }
            return index == 0 ? state.waiting.first : nil
        }
        tasks.forget(id)
        if let next { tasks.wake(next) }
    }
}
