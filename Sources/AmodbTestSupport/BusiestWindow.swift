/// The sliding window that holds the most of a series of instants: how a test checks a
/// per-minute limit as amodb counts it, over every window and not over fixed minutes
/// (twenty calls at the end of one minute and twenty at the start of the next are forty
/// in one window).
package struct BusiestWindow: Sendable, Equatable {
    /// How many instants it holds.
    package let count: Int
    /// Where its first and last instants are in the sorted series.
    package let indices: ClosedRange<Int>

    /// The window of `length` that holds the most of `instants` (sorted, oldest first), the
    /// earliest of them on a tie; nil when there are none. A window is `(end − length, end]`,
    /// as amodb's limit counts: a call exactly `length` before another is outside its window.
    package init?(of instants: [ContinuousClock.Instant], length: Duration) {
        guard !instants.isEmpty else { return nil }
        precondition(zip(instants, instants.dropFirst()).allSatisfy { $0 <= $1 }, "instants must be sorted")
        var best = 0...0
        var first = 0
        for last in instants.indices {
            while instants[first] <= instants[last] - length { first += 1 }
            if last - first > best.upperBound - best.lowerBound { best = first...last }
        }
        indices = best
        count = best.count
    }
}
