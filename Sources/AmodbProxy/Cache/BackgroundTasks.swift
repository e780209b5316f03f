import AmodbModels
import Dispatch
import Synchronization

/// The forwarder's tasks (fetches, refreshes, the key probe) and their waits (429
/// retries, probe intervals, misses waiting for a call), tracked so that shutdown can end
/// them: `stop()` wakes every sleeper and refuses new background work, `drain(within:)`
/// waits for what is in flight.
///
/// Waits run on the forwarder's clock (`ProxyClock.schedule`), and a task is either
/// running or asleep in `pause`: so a simulation can tell when every task has gone as far
/// as it can without time passing (`settled()`).
final class BackgroundTasks: Sendable {
    /// Whether a client waits on the task's result.
    enum Kind: Sendable {
        /// A client waits on it (a miss): it runs even while stopping, so the client gets an answer.
        case awaited
        /// Nobody waits (a refresh, the key probe): not started once stopping.
        case background
    }

    private struct State {
        var tasks: [UInt64: Task<Void, Never>] = [:]
        var sleepers: [UInt64: CheckedContinuation<Wake, Never>] = [:]
        /// Sleepers woken (`wake`) before they had gone to sleep: they do not sleep.
        var wokenEarly: Set<UInt64> = []
        /// Those waiting in `settled()`.
        var settling: [CheckedContinuation<Void, Never>] = []
        var nextID: UInt64 = 0
        var stopping = false

        mutating func makeID() -> UInt64 {
            nextID &+= 1
            return nextID
        }

        /// Every task asleep (or none left): resumes those waiting for that.
        mutating func settledWaiters() -> [CheckedContinuation<Void, Never>] {
            guard tasks.count <= sleepers.count, !settling.isEmpty else { return [] }
            defer { settling = [] }
            return settling
        }
    }

    private let state = Mutex(State())
    private let clock: any ProxyClock

    /// Tasks whose waits run on `clock`.
    init(clock: any ProxyClock) {
        self.clock = clock
    }

    /// Runs `work` as a tracked task; `false` (and nothing runs) for background work once stopping.
    @discardableResult
    func run(_ kind: Kind, _ work: @escaping @Sendable () async -> Void) -> Bool {
        state.withLock { state in
            if state.stopping, kind == .background { return false }
            let id = state.makeID()
            // Registered under the lock the task's own removal takes: it cannot end unregistered.
            state.tasks[id] = Task {
                await work()
                let settled = self.state.withLock { state in
                    _ = state.tasks.removeValue(forKey: id)
                    return state.settledWaiters()
                }
                for waiter in settled { waiter.resume() }
            }
            return true
        }
    }

    /// A name for a sleep that `wake(_:)` can end early.
    func makeSleeperID() -> UInt64 {
        state.withLock { $0.makeID() }
    }

    /// What ended a sleep.
    enum Wake: Sendable {
        /// Its time passed.
        case timer
        /// `wake(_:)`, before its time.
        case early
        /// Shutdown: the caller gives up.
        case stopping
    }

    /// Waits `seconds` of the clock's time; `false` when shutdown woke it (or had begun):
    /// the caller gives up.
    func pause(_ seconds: Double) async -> Bool {
        await sleep(seconds, as: nil) != .stopping
    }

    /// Waits `seconds` of the clock's time, or until `wake(id)`, and says which ended it.
    func sleep(_ seconds: Double, as id: UInt64?) async -> Wake {
        await withCheckedContinuation { (continuation: CheckedContinuation<Wake, Never>) in
            enum Start {
                case sleeps(UInt64, [CheckedContinuation<Void, Never>])
                case stopping, woken
            }
            let start = state.withLock { state -> Start in
                if state.stopping { return .stopping }
                let id = id ?? state.makeID()
                if state.wokenEarly.remove(id) != nil { return .woken }
                state.sleepers[id] = continuation
                return .sleeps(id, state.settledWaiters())
            }
            switch start {
            case .stopping: continuation.resume(returning: .stopping)
            case .woken: continuation.resume(returning: .early)
            case .sleeps(let id, let settled):
                // The timer is set before anyone hears that every task sleeps: a simulation
                // that moved its clock first would set it late.
                clock.schedule(after: max(0, seconds)) { self.wake(id, early: false) }
                for waiter in settled { waiter.resume() }
            }
        }
    }

    /// Ends the sleep named `id` now (or, if it has not begun, makes it end at once).
    func wake(_ id: UInt64) {
        wake(id, early: true)
    }

    /// Whoever removes the sleeper resumes it: the timer, `wake` or `stop()`, exactly once.
    private func wake(_ id: UInt64, early: Bool) {
        let sleeper = state.withLock { state in
            let sleeper = state.sleepers.removeValue(forKey: id)
            if sleeper == nil, early, !state.stopping { state.wokenEarly.insert(id) }
            return sleeper
        }
        sleeper?.resume(returning: early ? .early : .timer)
    }

    /// Forgets an early wake that found no sleep (its waiter left without sleeping again).
    func forget(_ id: UInt64) {
        _ = state.withLock { $0.wokenEarly.remove(id) }
    }

    /// Returns once every task has ended or sleeps in `pause`: nothing more happens until
    /// the clock moves. For simulations on a clock they move themselves.
    func settled() async {
        // Most steps of a replay start no task: no continuation to make for them.
        if state.withLock({ $0.tasks.count <= $0.sleepers.count }) { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.tasks.count <= state.sleepers.count { return true }
                state.settling.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Begins shutdown: wakes every sleeper (its task gives up) and refuses new background work.
    func stop() {
        let sleepers = state.withLock { state -> [CheckedContinuation<Wake, Never>] in
            state.stopping = true
            state.wokenEarly = []
            defer { state.sleepers = [:] }
            return Array(state.sleepers.values)
        }
        for sleeper in sleepers { sleeper.resume(returning: .stopping) }
    }

    /// Begins shutdown (`stop()`), waits for the tracked tasks for at most `seconds`, then
    /// cancels those left; returns whether all had ended.
    @discardableResult
    func drain(within seconds: Double) async -> Bool {
        stop()
        let deadline =
            ContinuousClock.now + .milliseconds((seconds * 1000).checkedInt(.up, clampedTo: 0...86_400_000) ?? 0)
        // Polled: an unstructured task's `value` cannot be awaited with a deadline.
        while count > 0, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        let left = state.withLock { Array($0.tasks.values) }
        left.forEach { $0.cancel() }
        return left.isEmpty
    }

    /// Tasks running now.
    var count: Int { state.withLock { $0.tasks.count } }
}
