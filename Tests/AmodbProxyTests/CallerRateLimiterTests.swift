import AmodbTestSupport
import Foundation
import Testing

@testable import AmodbProxy

@Suite(.timeLimit(.minutes(1)))
struct CallerRateLimiterTests {
    @Test func allowsABurstThenTheRate() {
        let limiter = CallerRateLimiter(perMinute: 60, burst: 3)
        #expect(limiter.take("a", now: 0) == nil)
        #expect(limiter.take("a", now: 0) == nil)
        #expect(limiter.take("a", now: 0) == nil)
        let wait = limiter.take("a", now: 0)
        #expect(wait != nil && abs(wait! - 1) < 0.001)
        #expect(limiter.take("b", now: 0) == nil, "another client has its own bucket")
        #expect(limiter.take("a", now: 1.01) == nil, "one token back after a second at 60/min")
    }

    /// The floods run on a thread of their own: seconds of CPU on the concurrency pool
    /// would starve the suites that serve sockets meanwhile. A table of 8,192 buckets
    /// sweeps the way the default 65,536 does, 30 times over in the first flood, for an
    /// eighth of the CPU the whole suite shares.
    @Test(arguments: [(600, 120, 0.0, 250_000), (600, 120, 0.001, 100_000), (1, 10_000_000, 0.0, 100_000)])
    func aFloodOfDistinctClientsStaysWithinTheCap(_ perMinute: Int, _ burst: Int, _ step: Double, _ clients: Int)
        async throws
    {
        let limiter = CallerRateLimiter(perMinute: perMinute, burst: burst, capacity: 8_192)
        let highest = try await offloaded {
            var now = 0.0
            var highest = 0
            for index in 0..<clients {
                _ = limiter.take(String(index), now: now)  // spoofed X-Forwarded-For addresses, each new
                now += step
                if index % 10_000 == 0 {
                    highest = max(highest, limiter.bucketCount)
                    if highest > limiter.capacity { break }
                }
            }
            return max(highest, limiter.bucketCount)
        }
        #expect(highest <= limiter.capacity)
        #expect(highest > limiter.capacity / 2, "the cap is used, not a table cleared at every turn")
    }

    @Test func aClientWhoseBucketWasSweptGetsNoFreshBurst() async throws {
        let limiter = CallerRateLimiter(perMinute: 1, burst: 5, capacity: 1024)
        for _ in 0..<5 { #expect(limiter.take("address:greedy", now: 0) == nil) }
        #expect(limiter.take("address:greedy", now: 0) != nil)
        // A flood of new keys, each owing less than the greedy client, sweeps the table many times.
        try await offloaded {
            for index in 0..<100_000 {
                for _ in 0..<(index % 3 == 0 ? 3 : 1) { _ = limiter.take("address:flood-\(index)", now: 1) }
            }
        }
        #expect(limiter.bucketCount <= 1024)
        let wait = limiter.take("address:greedy", now: 2)
        #expect(wait != nil && wait! > 50, "still owes what it owed before the sweep")
        for index in 0..<100 {
            #expect(limiter.take("address:newcomer-\(index)", now: 2) == nil, "a newcomer starts with a full burst")
        }
    }
}
