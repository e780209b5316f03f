package import Synchronization

extension Atomic where Value == Int {
    /// Adds `amount` to a counter only one queue ever writes: a relaxed load and store, which
    /// readers elsewhere see whole, without the locked read-modify-write of `add` (a full
    /// barrier behind the stores just made). The connection's counters and the proxy's
    /// per-event-loop counter lanes count this way.
    ///
    /// Only one queue may ever call this on a counter (docs/performance.md, "Invariants":
    /// counter lanes): two writers would lose counts. Debug builds check it: the store is a
    /// compare-and-exchange there, which finds the value changed under it when another
    /// thread wrote between the load and the store, and stops the process.
    package func increase(by amount: Int) {
        let current = load(ordering: .relaxed)
        #if DEBUG
            let (exchanged, found) = compareExchange(expected: current, desired: current &+ amount, ordering: .relaxed)
            precondition(exchanged, "a single-writer counter was written by two threads (\(current) became \(found))")
        #else
            store(current &+ amount, ordering: .relaxed)
        #endif
    }
}
