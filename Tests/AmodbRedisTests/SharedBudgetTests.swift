import AmodbRedis
import AmodbRedisTestSupport
import Testing

/// The fleet budget's Lua script against a real redis-server, with `now` pinned.
@Suite(.enabled(if: RedisServer.isInstalled, Comment(rawValue: RedisServer.notInstalledMessage)), .timeLimit(.minutes(1)))
struct SharedBudgetTests {
    @Test
    func aRefreshTakesACallOnlyWhileTheWindowIsAtMostHalfSpentAndAMissTakesEveryCall() async throws {
        try await withBudget(limit: 8) { budget in
            var refreshes: [SharedBudget.Decision] = []
            for index in 0..<5 { refreshes.append(try await budget.acquire(.refresh, now: 1_000, callID: "r\(index)")) }
            // Granted while at most 4 of 8 are spent once it is taken; then until the first call leaves.
            #expect(refreshes == Array(repeating: .granted, count: 4) + [.denied(retryAfterMilliseconds: 60_000)])
            var misses: [SharedBudget.Decision] = []
            for index in 0..<5 { misses.append(try await budget.acquire(.miss, now: 1_000, callID: "m\(index)")) }
            #expect(misses == Array(repeating: .granted, count: 4) + [.denied(retryAfterMilliseconds: 60_000)])
            let used = try await budget.used(now: 1_000)
            #expect(used == 8)
        }
    }

    @Test
    func slidesTheWindowCallByCall() async throws {
        try await withBudget(limit: 4) { budget in
            for (index, now) in [0, 10_000, 20_000, 30_000].enumerated() {
                let decision = try await budget.acquire(.miss, now: Int64(now), callID: "c\(index)")
                #expect(decision == .granted)
            }
            // Full until the call made at 0 leaves the window at 60 000.
            let full = try await budget.acquire(.miss, now: 45_000, callID: "c4")
            #expect(full == .denied(retryAfterMilliseconds: 15_000))
            let oneFree = try await budget.acquire(.miss, now: 60_000, callID: "c5")
            #expect(oneFree == .granted)
            let fullAgain = try await budget.acquire(.miss, now: 60_001, callID: "c6")
            #expect(fullAgain == .denied(retryAfterMilliseconds: 9_999))
            let used = try await budget.used(now: 60_001)
            #expect(used == 4)
        }
    }

    @Test
    func aCloseFromA429HoldsEveryReplicaUntilRetryAfter() async throws {
        try await withRedisServer { server in
            try await withRedisClient(server.configuration()) { first in
                try await withRedisClient(server.configuration()) { second in
                    let replicaA = SharedBudget(client: first, prefix: "amodb-proxy:", limit: 40)
                    let replicaB = SharedBudget(client: second, prefix: "amodb-proxy:", limit: 40)
                    try await replicaA.close(forMilliseconds: 5_000, now: 1_000)
                    try await replicaA.close(forMilliseconds: 1_000, now: 2_000)   // earlier: changes nothing
                    let held = try await replicaB.acquire(.refresh, now: 2_000, callID: "b1")
                    #expect(held == .denied(retryAfterMilliseconds: 4_000))
                    let reopened = try await replicaB.acquire(.refresh, now: 6_000, callID: "b2")
                    #expect(reopened == .granted)
                }
            }
        }
    }

    @Test
    func amodbsOwnHeadersSeenByOneReplicaBindTheOthers() async throws {
        try await withRedisServer { server in
            try await withRedisClient(server.configuration()) { first in
                try await withRedisClient(server.configuration()) { second in
                    // A stricter limit than configured (40): amodb says 4.
                    let stricterA = SharedBudget(client: first, prefix: "p:", limit: 40)
                    let stricterB = SharedBudget(client: second, prefix: "p:", limit: 40)
                    try await stricterA.observe(limit: 4, remaining: nil, resetAt: nil, now: 0)
                    var decisions: [SharedBudget.Decision] = []
                    for index in 0..<5 { decisions.append(try await stricterB.acquire(.miss, now: 0, callID: "b\(index)")) }
                    #expect(decisions == Array(repeating: .granted, count: 4) + [.denied(retryAfterMilliseconds: 60_000)])

                    // Fewer calls remaining than the window would allow, until amodb's reset time.
                    let remainingA = SharedBudget(client: first, prefix: "q:", limit: 40)
                    let remainingB = SharedBudget(client: second, prefix: "q:", limit: 40)
                    try await remainingA.observe(limit: nil, remaining: 2, resetAt: 10_000, now: 0)
                    decisions = []
                    for index in 0..<3 { decisions.append(try await remainingB.acquire(.miss, now: 1_000, callID: "r\(index)")) }
                    #expect(decisions == [.granted, .granted, .denied(retryAfterMilliseconds: 9_000)])
                    let afterReset = try await remainingB.acquire(.miss, now: 10_000, callID: "r3")
                    #expect(afterReset == .granted)
                }
            }
        }
    }

    @Test
    func twoReplicasTogetherNeverPassTheLimit() async throws {
        try await withRedisServer { server in
            try await withRedisClient(server.configuration()) { first in
                try await withRedisClient(server.configuration()) { second in
                    let budgets = [
                        SharedBudget(client: first, prefix: "p:", limit: 10),
                        SharedBudget(client: second, prefix: "p:", limit: 10),
                    ]
                    let granted = try await withThrowingTaskGroup(of: Bool.self) { group in
                        for index in 0..<40 {
                            group.addTask {
                                try await budgets[index % 2].acquire(.miss, now: 5_000, callID: "r\(index % 2)-\(index)") == .granted
                            }
                        }
                        return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
                    }
                    #expect(granted == 10)
                    // Another prefix is another deployment with a budget of its own.
                    let other = try await SharedBudget(client: first, prefix: "q:", limit: 10).acquire(.miss, now: 5_000, callID: "x")
                    #expect(other == .granted)
                }
            }
        }
    }
}

/// Runs `body` with a budget of `limit` on a fresh server.
private func withBudget(limit: Int, _ body: (SharedBudget) async throws -> Void) async throws {
    try await withRedisServer { server in
        try await withRedisClient(server.configuration()) { client in
            try await body(SharedBudget(client: client, prefix: "amodb-proxy:", limit: limit))
        }
    }
}
