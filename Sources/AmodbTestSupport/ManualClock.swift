public import AmodbProxy
import Synchronization

/// A clock tests move by hand: entry ages and freshness without waiting.
public final class ManualClock: ProxyClock {
    private let seconds: Mutex<Double>

    public init(_ start: Double = 1_800_000_000) {
        seconds = Mutex(start)
    }

    public func now() -> Double {
        seconds.withLock { $0 }
    }

    /// Moves time forward.
    public func advance(by interval: Double) {
        seconds.withLock { $0 += interval }
    }
}
