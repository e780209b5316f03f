package import AmodbProxy
import Synchronization

/// A clock tests move by hand: entry ages and freshness without waiting.
package final class ManualClock: ProxyClock {
    private let seconds: Mutex<Double>

    package init(_ start: Double = 1_800_000_000) {
        seconds = Mutex(start)
    }

    package func now() -> Double {
        seconds.withLock { $0 }
    }

    /// Moves time forward.
    package func advance(by interval: Double) {
        seconds.withLock { $0 += interval }
    }
}
