import AmodbProxy
import Synchronization

/// A clock that moves only when told, and runs what waits on it in time order: a replay's
/// clock. Where `ManualClock` in the tests leaves waits to real time, a wait here ends
/// exactly when `advance(to:settle:)` passes its time, so a replay of a day takes no
/// longer than its work.
package final class SimulatedClock: ProxyClock {
    private struct Timer {
        let at: Double
        /// Order of scheduling: timers due at the same time run in it.
        let order: UInt64
        let wake: @Sendable () -> Void
    }

    private struct State {
        var now: Double
        var timers: [Timer] = []
        var scheduled: UInt64 = 0
    }

    private let state: Mutex<State>

    /// A clock standing at `start` (seconds since 1970).
    package init(_ start: Double) {
        state = Mutex(State(now: start))
    }

    package func now() -> Double {
        state.withLock { $0.now }
    }

    package func schedule(after seconds: Double, _ wake: @escaping @Sendable () -> Void) {
        state.withLock { state in
            state.scheduled &+= 1
            let timer = Timer(at: state.now + max(0, seconds), order: state.scheduled, wake: wake)
            // Kept sorted by time, then order: few are pending at once (the waits in flight).
            let index = state.timers.firstIndex { ($0.at, $0.order) > (timer.at, timer.order) } ?? state.timers.endIndex
            state.timers.insert(timer, at: index)
        }
    }

    /// Moves to `time`, stopping at each pending timer on the way: the clock stands at the
    /// timer's time while it runs, then `settle` waits for what it woke to go as far as it can.
    package func advance(to time: Double, settle: () async -> Void) async {
        while let timer = nextTimer(before: time) {
            timer.wake()
            await settle()
        }
        state.withLock { $0.now = max($0.now, time) }
    }

    /// The first timer due at or before `time`, taken off the list, with the clock moved to it.
    private func nextTimer(before time: Double) -> Timer? {
        state.withLock { state in
            guard let first = state.timers.first, first.at <= time else { return nil }
            state.timers.removeFirst()
            state.now = max(state.now, first.at)
            return first
        }
    }
}
