/// A Prometheus histogram of durations with fixed bucket bounds, lock-free: one atomic
/// per bucket (the last for observations above every bound) and one for the sum (in
/// microseconds). The count is the buckets' total, so an observation costs two atomic
/// adds, and a snapshot's count always agrees with its buckets.
final class Histogram: Sendable {
    /// Upper bounds, in seconds (the `le` labels), ascending; `+Inf` is implied.
    let bounds: [Double]
    private let counters: AtomicCounters  // buckets…, above every bound, sum in µs

    /// Latency bounds from half a millisecond to ten seconds.
    static let latencyBounds: [Double] = [
        0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
    ]

    /// A histogram with `loopLanes` single-writer lanes (`AtomicCounters`).
    init(bounds: [Double] = Histogram.latencyBounds, loopLanes: Int = 0) {
        self.bounds = bounds
        counters = AtomicCounters(count: bounds.count + 2, loopLanes: loopLanes)
    }

    /// Records one observation, in the lane of event loop `loop` when given (see `AtomicCounters`).
    func observe(seconds: Double, loop: Int? = nil) {
        counters.add(bounds.firstIndex(where: { seconds <= $0 }) ?? bounds.count, loop: loop)
        counters.add(bounds.count + 1, Int((seconds * 1_000_000).rounded()), loop: loop)
    }

    /// Cumulative counts per bound (as Prometheus wants them), the sum in seconds, the count.
    func snapshot() -> (cumulative: [Int], sum: Double, count: Int) {
        var running = 0
        let cumulative = bounds.indices.map { index -> Int in
            running += counters.value(index)
            return running
        }
        return (
            cumulative, Double(counters.value(bounds.count + 1)) / 1_000_000, running + counters.value(bounds.count)
        )
    }
}
