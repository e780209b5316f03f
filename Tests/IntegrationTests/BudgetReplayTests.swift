import AmodbPlanner
import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

/// A day of a modest app's traffic (20 requests a second; a quarter to the trending lists,
/// the rest to 20,000 movies by Zipf popularity in 6 languages; seeded) replayed through the
/// real `ProxyDriver` cache stages, cache and budget on a simulated clock, on a 40-a-minute key:
/// what share of requests the budget refuses, with each movie TTL (docs/budget.md).
/// The longest of the suite: the planner reads the day's 1.7 million log lines in a debug
/// build (about four minutes alone, twice that beside a busy machine's other work).
@Suite(.timeLimit(.minutes(20)))
struct BudgetReplayTests {
    static let trace = {
        var trace = SyntheticTrace(rate: 20, duration: 86_400, seed: 7)
        // How concentrated popularity is decides how many distinct paths a day brings: at
        // this exponent the share answered from the cache with a day of movie freshness
        // (fresh or stale, about 89.5%) is the one the model of an app's day found (89.4%).
        trace.zipfExponent = 1.07
        return trace
    }()
    /// The two replays every test reads, each made once. The trace is drawn on a thread of
    /// its own: seconds of CPU on the concurrency pool (two threads) would starve the suites
    /// that serve sockets meanwhile; a replay suspends at every request, so it shares the pool.
    static let day = Task {
        let requests = try await offloaded { trace.requests() }
        // One after the other: a replay keeps a core busy, and the suite's other tests share the machine.
        let movieDay = await PolicyReplay.run(
            requests, plan: 40, movieTTL: 86_400, trendingTTL: 1800, configurationTTL: 86_400, missWait: 2)
        let movieHalfHour = await PolicyReplay.run(
            requests, plan: 40, movieTTL: 1800, trendingTTL: 1800, configurationTTL: 86_400, missWait: 2)
        let shares = (day: movieDay, halfHour: movieHalfHour)
        for (ttl, counted) in [("24 h", shares.day), ("30 min", shares.halfHour)] {
            print(
                "replay, 40/min, movie TTL \(ttl): fresh \(percent(counted.fresh, of: counted))%, "
                    + "stale \(percent(counted.stale, of: counted))% (p95 age \(Int(counted.staleAgesP95)) s), "
                    + "filled \(percent(counted.filled, of: counted))%, refused \(percent(counted.refused, of: counted))%, "
                    + "\(counted.calls) calls")
        }
        return shares
    }

    private static func percent(_ part: Int, of shares: ReplayShares) -> String {
        String(format: "%.1f", shares.percent(part))
    }

    /// The most calls a 40-a-minute key allows over the replay: a day, and the last misses' wait.
    private static let mostCalls = 40 * Int((86_400 + 3.0) / 60).advanced(by: 1)

    @Test func aDayOfMovieFreshnessRefusesAtMostEightPercent() async throws {
        let shares = try await Self.day.value.day
        #expect(shares.total > 1_700_000)
        #expect(shares.percent(shares.refused) <= 8)
        #expect(shares.calls <= Self.mostCalls, "never more than the key's budget")
    }

    @Test func theDefaultMovieFreshnessRefusesFewerThanTheOldPolicy() async throws {
        let shares = try await Self.day.value.halfHour
        // The previous release's policy (a quarter of the window kept for refreshes, which
        // took a call whenever the window had one; no wait) refused 25.7% of this trace when
        // its forwarder was replayed the same way (13.7% of the lighter-tailed traffic of the
        // model that set these rules).
        #expect(shares.percent(shares.refused) < 25.7)
        #expect(shares.calls <= Self.mostCalls)
    }

    @Test func thePlannerReadingTheTracesAccessLogAgreesWithinOnePoint() async throws {
        let shares = try await Self.day.value.day  // first, so the planner does not run beside the replays
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("replay-\(UUID().uuidString).log").path
        try await offloaded { try Self.trace.writeAccessLog(to: path) }
        defer { try? FileManager.default.removeItem(atPath: path) }
        let outcome = try await ProxyBinary().run([
            "plan", "--access-log", path, "--plans", "40", "--movie-ttls", "86400",
        ])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        let row = try #require(
            outcome.standardOutput.split(separator: "\n").first { $0.hasPrefix("      40") },
            "\(outcome.standardOutput)")
        // plan, the TTL in two cells ("24 h"), then fresh, stale, filled and refused.
        let cells = row.split(separator: " ")
        try #require(cells.count >= 7, "\(row)")
        let planned = cells[3...6].compactMap { Double($0) }
        try #require(planned.count == 4, "\(row)")
        let replayed = [shares.fresh, shares.stale, shares.filled, shares.refused].map(shares.percent)
        for (plannedShare, replayedShare) in zip(planned, replayed) {
            #expect(abs(plannedShare - replayedShare) <= 1, "planner \(planned), replay \(replayed)")
        }
    }
}
