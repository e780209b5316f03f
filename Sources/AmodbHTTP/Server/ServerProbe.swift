import Synchronization

/// What the server's connections did, observable from any thread: the evidence tests wait
/// on instead of sleeping (a piece of input was read, the output stayed bounded) and
/// operators read as numbers. Relaxed atomics: counts, not synchronization.
package final class ServerProbe: Sendable {
    private let peakUnsent = Atomic<Int>(0)
    private let evicted = Atomic<Int>(0)
    private let largestReady = Atomic<Int>(0)

    package init() {}

    /// The most bytes any connection has had queued and not yet taken by the kernel.
    package var peakUnsentBytes: Int { peakUnsent.load(ordering: .relaxed) }

    /// Connections closed to make room for newcomers at the connection cap.
    package var evictions: Int { evicted.load(ordering: .relaxed) }

    /// The most connections an event loop found ready in one `epoll_wait`: above 1, one
    /// wake-up served several connections.
    package var largestReadyBatch: Int { largestReady.load(ordering: .relaxed) }

    /// Records one connection's unsent bytes, keeping the peak.
    func noteUnsent(_ bytes: Int) {
        Self.raise(peakUnsent, to: bytes)
    }

    /// Records how many connections one `epoll_wait` of an event loop found ready.
    func noteReady(_ count: Int) {
        Self.raise(largestReady, to: count)
    }

    /// Raises `peak` to `value` if it is below.
    private static func raise(_ peak: borrowing Atomic<Int>, to value: Int) {
        var current = peak.load(ordering: .relaxed)
        while value > current {
            let (exchanged, original) = peak.compareExchange(expected: current, desired: value, ordering: .relaxed)
            if exchanged { return }
            current = original
        }
    }

    /// Records a connection closed for a newcomer.
    func noteEviction() {
        evicted.add(1, ordering: .relaxed)
    }
}
