import Glibc

/// The clocks read for every request, straight from the C library: a precise read goes
/// through the time-stamp counter and is a few percent of a cache hit's time in user
/// space, so the hit path reads as few as it can, and the coarse clock where that is enough.
public enum Clocks {
    /// Monotonic nanoseconds (`CLOCK_MONOTONIC`, the clock Dispatch counts in), precise: for
    /// durations (the access log's, the latency metrics').
    public static func uptimeNanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }

    /// Whole seconds since 1970 as of the kernel's last tick (`CLOCK_REALTIME_COARSE`, 1 to
    /// 4 ms old, read without the time-stamp counter): for the `Date` field, which shows
    /// whole seconds.
    static func coarseEpochSeconds() -> Int {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME_COARSE, &time)
        return time.tv_sec
    }
}
