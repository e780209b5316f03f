import Synchronization

/// Readiness that comes back: once amodb refuses the key (401) or the plan (402),
/// one cheap call every `interval` (30–60 s, spread at random) asks amodb again, in the
/// background and within the budget's reserve, until it accepts the key. `/readyz`
/// follows the last word, whether a client's miss or the probe had it.
final class KeyProbe: Sendable {
    private struct State {
        var rejected = false
        var probing = false
    }

    private let state = Mutex(State())
    private let tasks: BackgroundTasks
    private let interval: ClosedRange<Double>

    /// A probe run as `tasks`, waiting a random time in `interval` (seconds) between calls.
    init(tasks: BackgroundTasks, interval: ClosedRange<Double>) {
        self.tasks = tasks
        self.interval = interval
    }

    /// Whether amodb refused the key or the plan on its last say.
    var keyRejected: Bool { state.withLock { $0.rejected } }

    /// Takes amodb's status on any call; on a refusal, starts probing with `call` (one call
    /// to amodb within the budget, returning amodb's status, or `nil` when none was made
    /// or amodb did not answer) unless a probe already runs.
    func observe(status: Int, probe call: @escaping @Sendable () async -> Int?) {
        let starts = state.withLock { state -> Bool in
            switch status {
            case 401, 402:
                state.rejected = true
                guard !state.probing else { return false }
                state.probing = true
                return true
            case 200, 404:
                state.rejected = false
                return false
            default:
                return false
            }
        }
        guard starts else { return }
        let started = tasks.run(.background) { await self.probe(call) }
        if !started { state.withLock { $0.probing = false } }
    }

    private func probe(_ call: @escaping @Sendable () async -> Int?) async {
        while await tasks.pause(Double.random(in: interval)) {
            guard stillRejected() else { return }
            if let status = await call() { observe(status: status, probe: call) }
            guard stillRejected() else { return }
        }
        state.withLock { $0.probing = false }
    }

    /// Whether to go on probing; when not, the probe ends in the same step, so a refusal
    /// seen just after starts a new one.
    private func stillRejected() -> Bool {
        state.withLock { state in
            if state.rejected { return true }
            state.probing = false
            return false
        }
    }
}
