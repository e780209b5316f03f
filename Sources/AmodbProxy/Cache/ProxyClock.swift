import Foundation

/// Wall-clock time in seconds since 1970, behind a protocol so tests can move it.
/// Wall-clock (not monotonic) because stored entries' ages must survive a restart.
public protocol ProxyClock: Sendable {
    /// Now, in seconds since 1970.
    func now() -> Double
}

/// The system's real-time clock.
public struct SystemClock: ProxyClock {
    public init() {}

    public func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
