/// The cumulative counts the status page derives its figures from, read from the counters
/// `/metrics` already keeps (`ProxyMetrics`, `CacheStatistics`): a figure for a span is the
/// difference of two samples, so nothing is counted twice and a hit pays for nothing new.
struct StatusCounts: Sendable, Equatable {
    /// Calls made to amodb (retries and key probes included).
    var calls = 0
    /// Background refreshes of stale entries started.
    var refreshes = 0
    /// Calls the budget refused.
    var denials = 0
    /// Answers to forwarded routes from a fresh entry (304s included).
    var fresh = 0
    /// Answers from a stale entry.
    var stale = 0
    /// Answers that needed amodb and got its answer (or its error).
    var filled = 0
    /// Answers to misses that got no call: a 503.
    var refused = 0

    /// Every answer to a forwarded route.
    var answers: Int { fresh + stale + filled + refused }

    /// What was counted between `earlier` and `self`; a count that went back (counters
    /// never do, but a sample taken from another source might) reads 0.
    func since(_ earlier: StatusCounts) -> StatusCounts {
        StatusCounts(
            calls: max(0, calls - earlier.calls), refreshes: max(0, refreshes - earlier.refreshes),
            denials: max(0, denials - earlier.denials), fresh: max(0, fresh - earlier.fresh),
            stale: max(0, stale - earlier.stale), filled: max(0, filled - earlier.filled),
            refused: max(0, refused - earlier.refused))
    }
}
