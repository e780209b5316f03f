import AmodbRedis
import AmodbRedisTestSupport
import AmodbTestSupport
import Testing

@testable import AmodbProxy

/// The fleet budget's Lua script against a real redis-server, with `now` pinned.
@Suite(
    .enabled(if: RedisServer.isInstalled, Comment(rawValue: RedisServer.notInstalledMessage)), .timeLimit(.minutes(1)))
struct SharedBudgetTests {
    @Test
    func aRefreshTakesACallOnlyWhileTheWindowIsAtMostHalfSpentAndAMissTakesEveryCall() async throws {
        try await withBudget(limit: 8) { budget in
            let window = try await budget.started()
            var refreshes: [SharedBudget.Decision] = []
            for index in 0..<5 {
                refreshes.append(try await budget.acquire(.refresh, now: 1_000, callID: "r\(index)", window: window))
            }
            // Granted while at most 4 of 8 are spent once it is taken; then until the first call leaves.
            #expect(refreshes == Array(repeating: .granted, count: 4) + [.denied(retryAfterMilliseconds: 60_000)])
            var misses: [SharedBudget.Decision] = []
            for index in 0..<5 {
                misses.append(try await budget.acquire(.miss, now: 1_000, callID: "m\(index)", window: window))
            }
            #expect(misses == Array(repeating: .granted, count: 4) + [.denied(retryAfterMilliseconds: 60_000)])
            let used = try await budget.used(now: 1_000)
            #expect(used == 8)
        }
    }

    @Test
    func slidesTheWindowCallByCall() async throws {
        try await withBudget(limit: 4) { budget in
            let window = try await budget.started()
            for (index, now) in [0, 10_000, 20_000, 30_000].enumerated() {
                let decision = try await budget.acquire(.miss, now: Int64(now), callID: "c\(index)", window: window)
                #expect(decision == .granted)
            }
            // Full until the call made at 0 leaves the window at 60 000.
            let full = try await budget.acquire(.miss, now: 45_000, callID: "c4", window: window)
            #expect(full == .denied(retryAfterMilliseconds: 15_000))
            let oneFree = try await budget.acquire(.miss, now: 60_000, callID: "c5", window: window)
            #expect(oneFree == .granted)
            let fullAgain = try await budget.acquire(.miss, now: 60_001, callID: "c6", window: window)
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
                    let window = try await replicaB.started()
                    try await replicaA.close(forMilliseconds: 5_000, now: 1_000)
                    try await replicaA.close(forMilliseconds: 1_000, now: 2_000)  // earlier: changes nothing
                    let held = try await replicaB.acquire(.refresh, now: 2_000, callID: "b1", window: window)
                    #expect(held == .denied(retryAfterMilliseconds: 4_000))
                    let probe = try await replicaB.acquire(.refresh, now: 6_000, callID: "b2", window: window)
                    #expect(probe == .probe, "the first call after the pause goes alone")
                    for (replica, id) in [(replicaA, "a1"), (replicaB, "b3")] {
                        let waiting = try await replica.acquire(.miss, now: 6_500, callID: id, window: window)
                        #expect(waiting == .denied(retryAfterMilliseconds: 100), "no other call while the probe is out")
                    }
                    try await replicaA.reopen(probe: "a1", now: 6_600)  // not the probe out: changes nothing
                    #expect(try await replicaA.acquire(.miss, now: 6_700, callID: "a2", window: window) != .granted)
                    try await replicaB.reopen(probe: "b2", now: 6_800)
                    #expect(try await replicaA.acquire(.miss, now: 6_900, callID: "a3", window: window) == .granted)
                    #expect(try await replicaB.acquire(.miss, now: 6_900, callID: "b4", window: window) == .granted)
                }
            }
        }
    }

    @Test
    func aCallCountsFromWhenItCameBackAndASeedKeepsTheLaterTime() async throws {
        try await withBudget(limit: 1) { budget in
            let window = try await budget.started()
            #expect(try await budget.acquire(.miss, now: 1_000, callID: "slow", window: window) == .granted)
            try await budget.complete("slow", at: 4_000)
            #expect(try await budget.acquire(.miss, now: 61_000, callID: "n1", window: window) != .granted)
            _ = try await budget.seed(
                [.init(id: "slow", at: 1_000)], replica: "r", replicas: 1, settleMilliseconds: 0, now: 61_500)
            #expect(
                try await budget.acquire(.miss, now: 63_000, callID: "n2", window: window)
                    == .denied(retryAfterMilliseconds: 1_000), "the seed's earlier time did not move it back")
            #expect(try await budget.acquire(.miss, now: 64_001, callID: "n3", window: window) == .granted)
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
                    let stricterWindow = try await stricterB.started()
                    var decisions: [SharedBudget.Decision] = []
                    for index in 0..<5 {
                        decisions.append(
                            try await stricterB.acquire(.miss, now: 0, callID: "b\(index)", window: stricterWindow))
                    }
                    #expect(
                        decisions == Array(repeating: .granted, count: 4) + [.denied(retryAfterMilliseconds: 60_000)])

                    // Fewer calls remaining than the window would allow, until amodb's reset time.
                    let remainingA = SharedBudget(client: first, prefix: "q:", limit: 40)
                    let remainingB = SharedBudget(client: second, prefix: "q:", limit: 40)
                    try await remainingA.observe(limit: nil, remaining: 2, resetAt: 10_000, now: 0)
                    let remainingWindow = try await remainingB.started()
                    decisions = []
                    for index in 0..<3 {
                        decisions.append(
                            try await remainingB.acquire(
                                .miss, now: 1_000, callID: "r\(index)", window: remainingWindow))
                    }
                    #expect(decisions == [.granted, .granted, .denied(retryAfterMilliseconds: 9_000)])
                    let afterReset = try await remainingB.acquire(
                        .miss, now: 10_000, callID: "r3", window: remainingWindow)
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
                    let window = try await budgets[0].started()
                    let granted = try await withThrowingTaskGroup(of: Bool.self) { group in
                        for index in 0..<40 {
                            group.addTask {
                                try await budgets[index % 2].acquire(
                                    .miss, now: 5_000, callID: "r\(index % 2)-\(index)", window: window) == .granted
                            }
                        }
                        return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
                    }
                    #expect(granted == 10)
                    // Another prefix is another deployment with a budget of its own.
                    let otherBudget = SharedBudget(client: first, prefix: "q:", limit: 10)
                    let other = try await otherBudget.acquire(
                        .miss, now: 5_000, callID: "x", window: try await otherBudget.started())
                    #expect(other == .granted)
                }
            }
        }
    }
}

extension SharedBudgetTests {
    @Test
    func aWindowLostByRedisIsPutBackByTheReplicasThatSpentItBeforeAnyoneSpendsMore() async throws {
        try await withRedisServer { server in
            try await withRedisClient(server.configuration()) { first in
                try await withRedisClient(server.configuration()) { second in
                    let a = SharedBudget(client: first, prefix: "p:", limit: 10)
                    let b = SharedBudget(client: second, prefix: "p:", limit: 10)
                    var window = try await a.seed([], replica: "a", replicas: 2, settleMilliseconds: 3_000, now: 0)
                    #expect(
                        try await b.seed([], replica: "b", replicas: 2, settleMilliseconds: 3_000, now: 0) == window)
                    var spentByA: [SharedBudget.Call] = []
                    var spentByB: [SharedBudget.Call] = []
                    for index in 1...5 {
                        #expect(
                            try await a.acquire(.miss, now: 10_000 + Int64(index), callID: "a:\(index)", window: window)
                                == .granted)
                        spentByA.append(.init(id: "a:\(index)", at: 10_000 + Int64(index)))
                        #expect(
                            try await b.acquire(.miss, now: 10_000 + Int64(index), callID: "b:\(index)", window: window)
                                == .granted)
                        spentByB.append(.init(id: "b:\(index)", at: 10_000 + Int64(index)))
                    }
                    #expect(try await a.windowState(now: 10_010).since == window)
                    #expect(
                        try await first.send(["PTTL", "p:budget:window"]).integer.map { $0 > 0 && $0 <= 600_000 }
                            == true)
                    _ = try await first.send(["FLUSHALL"])
                    #expect(try await a.windowState(now: 10_010).since == nil)
                    #expect(try await a.acquire(.miss, now: 20_000, callID: "a:6", window: window) == .unseeded)
                    window = try await a.seed(
                        spentByA, replica: "a", replicas: 2, settleMilliseconds: 3_000, now: 20_000)
                    #expect(window == 20_000)
                    // Until b has put its calls back (or a replica's lifetime passed), nothing is granted.
                    #expect(
                        try await a.acquire(.miss, now: 20_001, callID: "a:6", window: window)
                            == .denied(retryAfterMilliseconds: 2_999))
                    #expect(try await b.acquire(.miss, now: 20_002, callID: "b:6", window: 10_000) == .unseeded)
                    #expect(
                        try await b.seed(spentByB, replica: "b", replicas: 2, settleMilliseconds: 3_000, now: 20_002)
                            == window)
                    // Seeding twice counts nothing twice.
                    _ = try await a.seed(spentByA, replica: "a", replicas: 2, settleMilliseconds: 3_000, now: 20_003)
                    #expect(try await a.used(now: 20_004) == 10)
                    // Full until the oldest call (10 001) leaves the window.
                    #expect(
                        try await a.acquire(.miss, now: 20_004, callID: "a:6", window: window)
                            == .denied(retryAfterMilliseconds: 49_997))
                    #expect(
                        try await b.acquire(.miss, now: 20_005, callID: "b:6", window: window)
                            == .denied(retryAfterMilliseconds: 49_996))
                }
            }
        }
    }

    @Test
    func aWindowStartedAgainGrantsAfterAReplicasLifetimeWithoutTheOnesThatDidNotSeed() async throws {
        try await withBudget(limit: 10) { budget in
            let calls = (1...3).map { SharedBudget.Call(id: "a:\($0)", at: 9_000 + Int64($0)) }
            let window = try await budget.seed(calls, replica: "a", replicas: 2, settleMilliseconds: 3_000, now: 10_000)
            #expect(
                try await budget.acquire(.miss, now: 11_000, callID: "a:4", window: window)
                    == .denied(retryAfterMilliseconds: 2_000))
            #expect(try await budget.acquire(.miss, now: 13_000, callID: "a:4", window: window) == .granted)
            #expect(try await budget.used(now: 13_000) == 4)
        }
    }

    @Test
    func aSeedAddsOnlyCallsOfTheWindowAndNeverMoreThanTheLimit() async throws {
        try await withBudget(limit: 10) { budget in
            let old = SharedBudget.Call(id: "old", at: 100_000 - 60_000)
            let future = SharedBudget.Call(id: "future", at: 100_001)
            let recent = (1...15).map { SharedBudget.Call(id: "r:\($0)", at: 90_000 + Int64($0)) }
            let window = try await budget.seed(
                [old, future] + recent, replica: "a", replicas: 1, settleMilliseconds: 0, now: 100_000)
            #expect(try await budget.used(now: 100_000) == 10)
            // Full until the oldest call kept (r:6, at 90 006) leaves the window.
            #expect(
                try await budget.acquire(.miss, now: 100_000, callID: "n", window: window)
                    == .denied(retryAfterMilliseconds: 50_006))
        }
    }

    @Test
    func aCloseKeptByAReplicaIsPutBackWithItsCalls() async throws {
        try await withBudget(limit: 10) { budget in
            let window = try await budget.seed(
                [], replica: "a", replicas: 1, settleMilliseconds: 0, closedUntil: 15_000, now: 10_000)
            #expect(
                try await budget.acquire(.miss, now: 10_000, callID: "n", window: window)
                    == .denied(retryAfterMilliseconds: 5_000))
        }
    }
}

/// Each client's share of the window's calls, checked by the same script in the same step.
extension SharedBudgetTests {
    @Test
    func aClientsShareIsTakenWithTheWindowsCallAndASpentShareTakesNone() async throws {
        try await withBudget(limit: 10) { budget in
            let window = try await budget.started()
            let greedy = try #require(budget.share(named: "0a1b2c", calls: 3))
            var decisions: [SharedBudget.Decision] = []
            for (index, now) in [1_000, 2_000, 3_000, 4_000, 5_000].enumerated() {
                decisions.append(
                    try await budget.acquire(.miss, now: Int64(now), callID: "g\(index)", window: window, share: greedy)
                )
            }
            // Spent until its first call (at 1 000) leaves the window at 61 000.
            #expect(
                decisions == [
                    .granted, .granted, .granted, .shareSpent(retryAfterMilliseconds: 57_000),
                    .shareSpent(retryAfterMilliseconds: 56_000),
                ])
            #expect(try await budget.used(now: 5_000) == 3, "a miss its share refused took no call")
            let other = try #require(budget.share(named: "ffee", calls: 3))
            #expect(try await budget.acquire(.miss, now: 5_000, callID: "o0", window: window, share: other) == .granted)
            #expect(
                try await budget.acquire(.miss, now: 61_000, callID: "g5", window: window, share: greedy) == .granted,
                "its oldest call has left")
        }
    }

    @Test
    func aCallTheWindowRefusesIsNotChargedToTheShare() async throws {
        try await withBudget(limit: 2) { budget in
            let window = try await budget.started()
            let client = try #require(budget.share(named: "c1", calls: 2))
            #expect(try await budget.acquire(.miss, now: 0, callID: "x0", window: window) == .granted)
            #expect(try await budget.acquire(.miss, now: 0, callID: "x1", window: window) == .granted)
            for index in 0..<5 {
                let refused = try await budget.acquire(
                    .miss, now: 1_000, callID: "c\(index)", window: window, share: client)
                #expect(refused == .denied(retryAfterMilliseconds: 59_000), "the window's refusal, not the share's")
            }
            #expect(try await budget.standing(client, now: 1_000) == (2, nil), "nothing charged")
            #expect(
                try await budget.acquire(.miss, now: 60_000, callID: "c5", window: window, share: client) == .granted)
            #expect(
                try await budget.acquire(.miss, now: 60_000, callID: "c6", window: window, share: client) == .granted)
            #expect(try await budget.standing(client, now: 60_001) == (0, 59_999))
        }
    }

    @Test
    func aShareSeenByOneReplicaBindsTheOthersEvenAtOnce() async throws {
        try await withRedisServer { server in
            try await withRedisClient(server.configuration()) { first in
                try await withRedisClient(server.configuration()) { second in
                    let budgets = [
                        SharedBudget(client: first, prefix: "p:", limit: 40),
                        SharedBudget(client: second, prefix: "p:", limit: 40),
                    ]
                    let window = try await budgets[0].started()
                    let share = try #require(budgets[0].share(named: "client", calls: 5))
                    let granted = try await withThrowingTaskGroup(of: Bool.self) { group in
                        for index in 0..<30 {
                            group.addTask {
                                try await budgets[index % 2].acquire(
                                    .miss, now: 5_000, callID: "r\(index)", window: window, share: share) == .granted
                            }
                        }
                        return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
                    }
                    #expect(granted == 5)
                    #expect(try await budgets[1].used(now: 5_000) == 5)
                }
            }
        }
    }

    @Test
    func peekingAtAShareTakesNothing() async throws {
        try await withBudget(limit: 10) { budget in
            let window = try await budget.started()
            let client = try #require(budget.share(named: "peek", calls: 1))
            for _ in 0..<3 { #expect(try await budget.standing(client, now: 1_000) == (1, nil)) }
            #expect(
                try await budget.acquire(.miss, now: 1_000, callID: "p0", window: window, share: client) == .granted)
            #expect(try await budget.standing(client, now: 2_000) == (0, 59_000))
            #expect(try await budget.used(now: 2_000) == 1)
        }
    }

    @Test
    func aShareKeyHoldsAtMostItsCallsAndExpiresAWindowAfterTheLastOne() async throws {
        try await withRedisServer { server in
            try await withRedisClient(server.configuration()) { redis in
                let budget = SharedBudget(client: redis, prefix: "p:", limit: 100)
                let window = try await budget.started()
                let client = try #require(budget.share(named: "abc", calls: 2))
                #expect(client.key == "p:share:abc")
                for index in 0..<6 {
                    _ = try await budget.acquire(
                        .miss, now: Int64(index), callID: "a\(index)", window: window, share: client)
                }
                #expect(try await redis.send(["ZCARD", "p:share:abc"]).integer == 2)
                let ttl = try #require(try await redis.send(["PTTL", "p:share:abc"]).integer)
                #expect(ttl > 0 && ttl <= 60_000)
                // Refusals create no key: a client refused by the window leaves nothing.
                let full = SharedBudget(client: redis, prefix: "q:", limit: 1)
                let fullWindow = try await full.started()
                _ = try await full.acquire(.miss, now: 0, callID: "q0", window: fullWindow)
                for index in 0..<50 {
                    let other = try #require(full.share(named: "refused\(index)", calls: 2))
                    _ = try await full.standing(other, now: 1)
                    #expect(
                        try await full.acquire(.miss, now: 1, callID: "q\(index + 1)", window: fullWindow, share: other)
                            != .granted)
                }
                #expect(try await redis.send(["KEYS", "*share:refused*"]).array?.isEmpty == true)
                // A window of 500 ms: the key's expiry is Redis's own clock, not the caller's `now`.
                let short = SharedBudget(client: redis, prefix: "r:", limit: 100, windowMilliseconds: 500)
                let shortWindow = try await short.started()
                let brief = try #require(short.share(named: "abc", calls: 2))
                #expect(
                    try await short.acquire(.miss, now: 0, callID: "b0", window: shortWindow, share: brief) == .granted)
                let briefTTL = try #require(try await redis.send(["PTTL", "r:share:abc"]).integer)
                #expect(briefTTL == -2 || (briefTTL > 0 && briefTTL <= 500), "expiring, or already gone")
                #expect(
                    await eventually { (try? await redis.send(["EXISTS", "r:share:abc"]).integer) == 0 },
                    "gone a window after the client's last call")
            }
        }
    }

    @Test(arguments: ["", "a b", "a:b", "x\r\nDEL *", String(repeating: "a", count: 65), "é"])
    func aNameThatIsNotASafeKeyGetsNoShare(_ name: String) async throws {
        // Nothing is sent: a client that never connects will do.
        try await withRedisClient(RedisConfiguration(endpoint: RedisEndpoint(host: "127.0.0.1", port: 1))) { client in
            let budget = SharedBudget(client: client, prefix: "p:", limit: 10)
            #expect(budget.share(named: name, calls: 1) == nil)
            #expect(
                budget.share(named: String(repeating: "a", count: 64), calls: 1)?.key == "p:share:"
                    + String(repeating: "a", count: 64))
        }
    }
}

extension SharedBudget {
    /// Starts the window (or joins it) as the only replica, for tests of the decisions themselves.
    fileprivate func started(now: Int64 = 0) async throws -> Int64 {
        try await seed([], replica: "test", replicas: 1, settleMilliseconds: 0, now: now)
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
