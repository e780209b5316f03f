import AmodbProxy
import AmodbSandbox
import AmodbTestSupport
import Foundation
import Testing

@Suite(.timeLimit(.minutes(2)))
struct BudgetIntegrationTests {
    /// 300 distinct paths: 8 trending lists × 5 pages × 2 languages, and movies.
    static let paths: [String] = {
        var paths: [String] = []
        for media in ["all", "movie", "tv", "person"] {
            for window in ["day", "week"] {
                for page in 1...5 {
                    for language in ["en-US", "de-DE"] {
                        paths.append("/3/trending/\(media)/\(window)?page=\(page)&language=\(language)")
                    }
                }
            }
        }
        var id = 1
        while paths.count < 300 {
            paths.append("/3/movie/\(id)")
            id += 1
        }
        return paths
    }()

    @Test func aBurstOf1000RequestsOver300PathsNeverExceedsTheBudget() async throws {
        let clock = ManualClock()
        // The stand-in's own limit is far above ours: only the proxy's budget holds the line.
        let setup = try SandboxedProxy(
            sandbox: .init(apiKey: ProxyHarness.key, requestsPerMinute: 10_000), clock: clock
        ) {
            $0.rateLimit = 40
        }
        try await withServer(setup) { _ in
            func burst() async throws -> [Int: Int] {
                try await withThrowingTaskGroup(of: Int.self) { group in
                    var statuses: [Int: Int] = [:]
                    var next = 0
                    func add() {
                        let target = Self.paths[(next * 7) % Self.paths.count]
                        next += 1
                        group.addTask { try await setup.harness.get(target).status }
                    }
                    for _ in 0..<32 { add() }
                    while let status = try await group.next() {
                        statuses[status, default: 0] += 1
                        if next < 1000 { add() }
                    }
                    return statuses
                }
            }

            let first = try await burst()
            let firstWindow = setup.sandbox.totalRequestCount
            #expect(firstWindow <= 40, "calls in the first minute: \(firstWindow)")
            #expect(firstWindow >= 25, "the budget is spent, not hoarded: \(firstWindow)")
            #expect(first.values.reduce(0, +) == 1000)
            #expect(Set(first.keys).isSubset(of: [200, 404, 503]))
            #expect(first[503, default: 0] > 0)

            clock.advance(by: 61)  // the proxy's window moves on
            _ = try await burst()
            let secondWindow = setup.sandbox.totalRequestCount - firstWindow
            #expect(secondWindow <= 40, "calls in the second minute: \(secondWindow)")
            #expect(secondWindow > 0)
        }
    }
}
