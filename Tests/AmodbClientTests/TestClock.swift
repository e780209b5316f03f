/// A clock a test moves by hand, for token lifetimes without waiting.
final class TestClock: Clock {
    /// A point on this clock: the time since it was made.
    struct Instant: InstantProtocol {
        var offset: Duration

        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private let elapsed = Locked<Duration>(.zero)

    var now: Instant { Instant(offset: elapsed.current) }
    var minimumResolution: Duration { .nanoseconds(1) }

    /// Moves time forward.
    func advance(by duration: Duration) {
        elapsed.withLock { $0 += duration }
    }

    /// Nothing here waits on this clock; a sleep returns at once.
    func sleep(until deadline: Instant, tolerance: Duration?) async throws {}
}
