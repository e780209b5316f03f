import AmodbHTTP
import Synchronization

/// A fixed number of counters in one allocation, indexed by position: counting on the
/// request path takes no lock. (`Atomic` cannot live in an array; a raw buffer can.)
///
/// The counters come in lanes. Lane 0 is shared: any thread adds to it with an atomic add.
/// Each further lane has a single writer, one event loop's queue (`ResponderContext.loopIndex`),
/// and grows by a relaxed load and store (`increase(by:)`). That keeps locked instructions,
/// which every hit would pay for, off the request path. A counter's value is its sum over
/// the lanes. Every access checks its index against `count` before it touches the buffer;
/// a lane's single writer is checked in debug builds (`increase(by:)`); docs/performance.md,
/// "Invariants": counter lanes.
final class AtomicCounters: @unchecked Sendable {
    // @unchecked: the buffer is allocated once, never resized, and only touched through
    // atomic operations until `deinit`; a single-writer lane is written by its one queue.
    private let storage: UnsafeMutablePointer<Atomic<Int>>
    /// How many counters there are.
    let count: Int
    /// Single-writer lanes, after the shared one.
    let loopLanes: Int
    /// Counters per lane, rounded up to a cache line of them, so that two lanes written by
    /// different cores never share a line.
    private let laneStride: Int

    /// `count` counters, with a lane for each of `loopLanes` event loops beside the shared one.
    init(count: Int, loopLanes: Int = 0) {
        self.count = count
        self.loopLanes = max(0, loopLanes)
        laneStride = (count + 7) / 8 * 8
        let total = laneStride * (self.loopLanes + 1)
        storage = .allocate(capacity: total)
        for index in 0..<total { (storage + index).initialize(to: Atomic(0)) }
    }

    deinit {
        storage.deinitialize(count: laneStride * (loopLanes + 1))
        storage.deallocate()
    }

    /// Adds `amount` to counter `index`: in the lane of event loop `loop`, when the caller
    /// runs on that loop's queue and the loop has a lane; else in the shared lane.
    func add(_ index: Int, _ amount: Int = 1, loop: Int? = nil) {
        precondition(index >= 0 && index < count, "a counter index past the counters")
        guard let loop, loop >= 0, loop < loopLanes else {
            storage[index].add(amount, ordering: .relaxed)
            return
        }
        storage[(loop + 1) * laneStride + index].increase(by: amount)
    }

    /// The value of counter `index`: its sum over the lanes.
    func value(_ index: Int) -> Int {
        precondition(index >= 0 && index < count, "a counter index past the counters")
        var sum = 0
        for lane in 0...loopLanes {
            sum &+= storage[lane * laneStride + index].load(ordering: .relaxed)
        }
        return sum
    }
}
