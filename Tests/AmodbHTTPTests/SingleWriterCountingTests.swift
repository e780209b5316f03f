import Foundation
import Synchronization
import Testing

@testable import AmodbHTTP

/// A single-writer counter adds up when one thread writes it, and a debug build stops the
/// process when two do (docs/performance.md, "Invariants": counter lanes).
struct SingleWriterCountingTests {
    @Test func oneWriterCountsEveryIncrease() {
        let counter = Atomic<Int>(0)
        for amount in 1...1_000 { counter.increase(by: amount) }
        #expect(counter.load(ordering: .relaxed) == 500_500)
    }

    #if DEBUG
        @Test func twoWritersStopADebugBuild() async {
            await #expect(processExitsWith: .failure) {
                final class Shared: Sendable {
                    let counter = Atomic<Int>(0)
                }
                let shared = Shared()
                // Until they collide: two threads writing at once lose an update within
                // microseconds on two cores, and within some time slices on one.
                for _ in 0..<2 {
                    Thread { while true { shared.counter.increase(by: 1) } }.start()
                }
                while true { sleep(1) }
            }
        }
    #endif
}
