import Synchronization

/// A fixed number of atomic counters in one allocation, indexed by position: counting
/// on the request path takes no lock. (`Atomic` cannot live in an array; a raw buffer can.)
final class AtomicCounters: @unchecked Sendable {
    // @unchecked: the buffer is allocated once, never resized, and only touched through
    // atomic operations until `deinit`.
    private let storage: UnsafeMutablePointer<Atomic<Int>>
    /// How many counters there are.
    let count: Int

    init(count: Int) {
        self.count = count
        storage = .allocate(capacity: count)
        for index in 0..<count { (storage + index).initialize(to: Atomic(0)) }
    }

    deinit {
        storage.deinitialize(count: count)
        storage.deallocate()
    }

    /// Adds `amount` to counter `index`.
    func add(_ index: Int, _ amount: Int = 1) {
        storage[index].add(amount, ordering: .relaxed)
    }

    /// The value of counter `index`.
    func value(_ index: Int) -> Int {
        storage[index].load(ordering: .relaxed)
    }
}
