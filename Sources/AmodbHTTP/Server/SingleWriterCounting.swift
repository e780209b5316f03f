package import Synchronization

extension Atomic where Value == Int {
    /// Adds `amount` to a counter only one queue ever writes: a relaxed load and store, which
    /// readers elsewhere see whole, without the locked read-modify-write of `add` (a full
    /// barrier behind the stores just made). The connection's counters and the proxy's
    /// per-event-loop counter lanes count this way.
    package func increase(by amount: Int) {
        store(load(ordering: .relaxed) &+ amount, ordering: .relaxed)
    }
}
