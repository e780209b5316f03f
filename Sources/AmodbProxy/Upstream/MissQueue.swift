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
/// with no call left is refused at once and cannot fill the queue. A miss its client's
/// share refuses never waits: the share frees far later than any wait.
final class MissQueue: Sendable {
    private struct State {
        /// The waiting misses' sleeper ids, oldest first.
        var waiting: [UInt64] = []
    }

    /// Seconds a miss waits for a call at most (`AMODB_MISS_WAIT`; 0: none waits).
    let wait: Double
    /// Misses waiting at once, at most.
    let capacity: Int
    private let state = Mutex(State())

    /// A queue where misses wait `wait` seconds at most, `capacity` of them at once.
    init(wait: Double, capacity: Int = 256) {
        self.wait = max(0, wait)
        self.capacity = max(1, capacity)
    }

    /// Misses waiting now.
    var count: Int { state.withLock { $0.waiting.count } }

    /// A call for a miss from `budget`, with one of `client`'s share: at once if the window
    /// has one and nobody waits, else after waiting in turn for one, within `wait` seconds of
    /// `clock`'s time. `first`: ahead of those waiting (a refresh of an entry drifting past
    /// twice its lifetime).
    func acquire(
        from budget: any CallBudget, client: String? = nil, clock: any ProxyClock, tasks: BackgroundTasks,
        first: Bool = false
    ) async -> CallDecision {
        let start = clock.now()
        let deadline = start + wait
        var decision = CallDecision.denied(retryAfter: UpstreamBudget.shortestWait)
        if wait == 0 || first || state.withLock({ $0.waiting.isEmpty }) {
            decision = await budget.acquire(.miss, client: client, now: start)
            // No wait, or the call frees after the wait would be over: refused now.
            guard case .denied(let retryAfter) = decision, wait > 0, start + retryAfter <= deadline else {
                return decision
            }
        } else if let client, let spent = await budget.shareWait(for: client, now: start) {
            return .shareSpent(retryAfter: spent)
        }
        let id = tasks.makeSleeperID()
        let joined = state.withLock { state -> Bool in
            guard state.waiting.count < capacity else { return false }
            if first { state.waiting.insert(id, at: 0) } else { state.waiting.append(id) }
            return true
        }
        guard joined else { return decision }
        defer { leave(id, tasks: tasks) }
        var nextTry = start
        if case .denied(let retryAfter) = decision { nextTry = start + retryAfter }
        // The time waited so far: the clock's, or the sleeps that ran their course, whichever
        // is more (a clock a test holds still does not make a miss wait for ever).
        var slept: Double = 0
        while true {
            let now = max(clock.now(), start + slept)
            if isHead(id), now >= nextTry {
                decision = await budget.acquire(.miss, client: client, now: clock.now())
                guard case .denied(let retryAfter) = decision else { return decision }
                nextTry = now + retryAfter
                if nextTry > deadline { return decision }
            }
            if now >= deadline { return decision }
            let nap = (isHead(id) ? min(nextTry, deadline) : deadline) - now
            switch await tasks.sleep(nap, as: id) {
            case .timer: slept = now - start + nap
            case .early: continue
            case .stopping: return decision
            }
        }
    }

    private func isHead(_ id: UInt64) -> Bool {
        state.withLock { $0.waiting.first == id }
    }

    /// Leaves the queue; when the head leaves, the next one becomes the head and is woken
    /// to ask the budget itself.
    private func leave(_ id: UInt64, tasks: BackgroundTasks) {
        let next = state.withLock { state -> UInt64? in
            guard let index = state.waiting.firstIndex(of: id) else { return nil }
            state.waiting.remove(at: index)
            return index == 0 ? state.waiting.first : nil
        }
        tasks.forget(id)
        if let next { tasks.wake(next) }
    }
}
