import AmodbModels
import Dispatch
import Synchronization

/// The forwarder's tasks (fetches, refreshes, the key probe) and their waits (429
/// retries, probe intervals), tracked so that shutdown can end them: `stop()` wakes every
/// sleeper and refuses new background work, `drain(within:)` waits for what is in flight.
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
        var sleepers: [UInt64: CheckedContinuation<Bool, Never>] = [:]
        var nextID: UInt64 = 0
        var stopping = false

        mutating func makeID() -> UInt64 {
            nextID &+= 1
            return nextID
        }
    }

    private let state = Mutex(State())

    /// Runs `work` as a tracked task; `false` (and nothing runs) for background work once stopping.
    @discardableResult
    func run(_ kind: Kind, _ work: @escaping @Sendable () async -> Void) -> Bool {
        state.withLock { state in
            if state.stopping, kind == .background { return false }
            let id = state.makeID()
            // Registered under the lock the task's own removal takes: it cannot end unregistered.
            state.tasks[id] = Task {
                await work()
                self.state.withLock { _ = $0.tasks.removeValue(forKey: id) }
            }
            return true
        }
    }

    /// Waits `seconds`; `false` when shutdown woke it (or had begun): the caller gives up.
    func pause(_ seconds: Double) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let id = state.withLock { state -> UInt64? in
                if state.stopping { return nil }
                let id = state.makeID()
                state.sleepers[id] = continuation
                return id
            }
            guard let id else { return continuation.resume(returning: false) }
            let nanoseconds = (seconds * 1e9).checkedInt(.up, clampedTo: 0...86_400_000_000_000) ?? 0
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) {
                // Whoever removes the sleeper resumes it: the timer or `stop()`, never both.
                self.state.withLock { $0.sleepers.removeValue(forKey: id) }?.resume(returning: true)
            }
        }
    }

    /// Whether shutdown has begun.
    var isStopping: Bool { state.withLock { $0.stopping } }

    /// Begins shutdown: wakes every sleeper (its task gives up) and refuses new background work.
    func stop() {
        let sleepers = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.stopping = true
            defer { state.sleepers = [:] }
            return Array(state.sleepers.values)
        }
        for sleeper in sleepers { sleeper.resume(returning: false) }
    }

    /// Begins shutdown (`stop()`), waits for the tracked tasks for at most `seconds`, then
    /// cancels those left; returns whether all had ended.
    @discardableResult
    func drain(within seconds: Double) async -> Bool {
        stop()
        let deadline = ContinuousClock.now + .milliseconds((seconds * 1000).checkedInt(.up, clampedTo: 0...86_400_000) ?? 0)
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
