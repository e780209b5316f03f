import AmodbHTTPTestSupport
import Synchronization
import Testing

/// The suite runs a bounded number of test cases at once (`CTestParallelism`): unbounded, a
/// 2-core machine starts every test together and a beside-a-hog run misses time limits.
struct TestParallelismTests {
    /// How many of `aCaseAmongMany`'s cases are running now.
    private static let running = Mutex(0)
    /// More cases than the width: unbounded, they would all run together.
    private static let cases = 2 * max(testParallelismWidth, 16) + 8

    @Test func theWidthIsSetBeforeTheRunnerStarts() {
        #expect(testParallelismWidth > 0, "SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH is not set")
    }

    /// Each case holds its place for a while; no more than the width run together (other
    /// tests take places too, so fewer may).
    @Test(arguments: 0..<cases) func aCaseAmongMany(index: Int) async throws {
        let now = Self.running.withLock { running in
            running += 1
            return running
        }
        #expect(now <= testParallelismWidth, "\(now) cases ran at once; the width is \(testParallelismWidth)")
        try await Task.sleep(for: .milliseconds(50))
        Self.running.withLock { $0 -= 1 }
    }
}
