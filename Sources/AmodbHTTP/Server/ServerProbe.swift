import Synchronization

/// What the server's connections did, observable from any thread: the evidence tests wait
/// on instead of sleeping (a piece of input was read, the output stayed bounded) and
/// operators read as numbers. Relaxed atomics: counts, not synchronization.
package final class ServerProbe: Sendable {
    private let peakUnsent = Atomic<Int>(0)
    private let evicted = Atomic<Int>(0)

    package init() {}

    /// The most bytes any connection has had queued and not yet taken by the kernel.
    package var peakUnsentBytes: Int { peakUnsent.load(ordering: .relaxed) }

    /// Connections closed to make room for newcomers at the connection cap.
    package var evictions: Int { evicted.load(ordering: .relaxed) }

    /// Records one connection's unsent bytes, keeping the peak.
    func noteUnsent(_ bytes: Int) {
        var current = peakUnsent.load(ordering: .relaxed)
        while bytes > current {
            let (exchanged, original) = peakUnsent.compareExchange(expected: current, desired: bytes, ordering: .relaxed)
            if exchanged { return }
            current = original
        }
    }

    /// Records a connection closed for a newcomer.
    func noteEviction() {
        evicted.add(1, ordering: .relaxed)
    }
}
