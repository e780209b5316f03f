import AmodbModels
import Dispatch
import Foundation

/// Wall-clock time in seconds since 1970, behind a protocol so tests can move it.
/// Wall-clock (not monotonic) because stored entries' ages must survive a restart.
package protocol ProxyClock: Sendable {
    /// Now, in seconds since 1970.
    func now() -> Double
    /// Calls `wake` once `seconds` of this clock's time have passed. The forwarder's waits
    /// (a 429's `Retry-After`, a miss waiting for a call) go through it, so a simulated
    /// clock can run them without waiting in real time. By default: a Dispatch timer.
    func schedule(after seconds: Double, _ wake: @escaping @Sendable () -> Void)
}

extension ProxyClock {
    package func schedule(after seconds: Double, _ wake: @escaping @Sendable () -> Void) {
        let nanoseconds = (seconds * 1e9).checkedInt(.up, clampedTo: 0...86_400_000_000_000) ?? 0
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds), execute: wake)
    }
}

/// The system's real-time clock.
package struct SystemClock: ProxyClock {
    package init() {}

    package func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
