/// One key's sliding 60-second window, as amodb counts calls: a call is admitted while
/// fewer than `limit` admitted calls happened in the last 60 seconds.
///
/// Refused calls are not recorded, so a client that keeps knocking is let in again as
/// soon as the oldest admitted call leaves the window (what `Retry-After` promises).
struct RateWindow: Sendable {
    /// The window's length.
    static let length: Duration = .seconds(60)

    /// The outcome of one call.
    enum Admission: Equatable {
        /// Counted; `remaining` calls are left and a slot frees in `reset` seconds.
        case admitted(remaining: Int, reset: Int)
        /// Over the limit: `count` is this call's number in the window (`limit + 1`),
        /// `retryAfter` the seconds until the oldest call leaves it (at least 1).
        case refused(count: Int, retryAfter: Int)
    }

    /// Calls allowed per window.
    let limit: Int
    /// Instants of the admitted calls still in the window, oldest first.
    private var calls: [ContinuousClock.Instant] = []

    init(limit: Int) {
        self.limit = limit
    }

    /// Counts a call made at `now` if the window has room.
    mutating func admit(at now: ContinuousClock.Instant) -> Admission {
        let horizon = now - Self.length
        if let firstInside = calls.firstIndex(where: { $0 > horizon }) {
            calls.removeFirst(firstInside)
        } else {
            calls.removeAll()
        }
        guard calls.count < limit else {
            return .refused(count: calls.count + 1, retryAfter: secondsUntilSlotFrees(now))
        }
        calls.append(now)
        return .admitted(remaining: limit - calls.count, reset: secondsUntilSlotFrees(now))
    }

    /// Whole seconds (rounded up, at least 1) until the oldest call leaves the window.
    private func secondsUntilSlotFrees(_ now: ContinuousClock.Instant) -> Int {
        guard let oldest = calls.first else { return 1 }
        return max(1, Self.wholeSecondsRoundedUp(oldest + Self.length - now))
    }

    /// A duration in whole seconds, rounded up.
    static func wholeSecondsRoundedUp(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return Int(seconds) + (attoseconds > 0 ? 1 : 0)
    }
}
