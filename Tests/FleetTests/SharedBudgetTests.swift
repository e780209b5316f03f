import AmodbRedis
import AmodbRedisTestSupport
import AmodbTestSupport
import Foundation
import Testing

@testable import AmodbProxy

/// The fleet's window, its Lua script against a real redis-server. The script judges by
/// Redis's own clock, so these tests use real time: waits are checked within bounds, and the
/// tests that slide the window use a short one.
@Suite(
    .enabled(if: RedisServer.isInstalled, Comment(rawValue: RedisServer.notInstalledMessage)), .timeLimit(.minutes(1)))
struct SharedBudgetTests {
    @Test
    func aRefreshTakesACallOnlyWhileTheWindowIsAtMostHalfSpentAndAMissTakesEveryCall() async throws {
        try await withBudget(limit: 8) { budget, _ in
            let replica = Replica(budget)
            var refreshes: [SharedBudget.Decision] = []
            for index in 0..<5 { refreshes.append(try await replica.ask(.refresh, "r\(index)")) }
            // Granted while at most 4 of 8 are spent once it is taken; then until the first call leaves.
            #expect(refreshes.prefix(4).allSatisfy { $0 == .granted })
            #expect(refreshes[4].waitsAbout(60_000))
            var misses: [SharedBudget.Decision] = []
            for index in 0..<5 { misses.append(try await replica.ask(.miss, "m\(index)")) }
            #expect(misses.prefix(4).allSatisfy { $0 == .granted })
            #expect(misses[4].waitsAbout(60_000))
            #expect(try await budget.used() == 8)
        }
    }

    @Test
    func slidesTheWindowCallByCall() async throws {
        // A window of 30 s, the calls 10 s apart: a loaded machine's late wake-ups (seconds,
        // when the suite's other tests hold the cooperative threads) stay inside the margins.
        try await withBudget(limit: 2, window: 30_000) { budget, _ in
            let replica = Replica(budget)
            #expect(try await replica.ask(.miss, "c0") == .granted)
            try await Task.sleep(for: .seconds(10))
            #expect(try await replica.ask(.miss, "c1") == .granted)
            // Full until the first call leaves, at most 20 s from now.
            let full = try await replica.ask(.miss, "c2")
            guard case .denied(let wait) = full else {
                Issue.record("not denied: \(full)")
                return
            }
            #expect(wait > 0 && wait <= 20_000)
            try await Task.sleep(for: .milliseconds(Int(wait) + 100))
            #expect(try await replica.ask(.miss, "c3") == .granted, "the first call has left")
            #expect(try await replica.ask(.miss, "c4") != .granted)
        }
    }

    @Test
    func aCloseFromA429HoldsEveryReplicaUntilRetryAfterThenOneProbeGoesFirst() async throws {
        try await withBudget(limit: 40, replicas: 2) { budgets, _ in
            let a = Replica(budgets[0], name: "a")
            let b = Replica(budgets[1], name: "b")
            #expect(try await b.ask(.miss, "b0") == .granted)
            try await budgets[0].close(forMilliseconds: 5_000)
            let held = try await b.ask(.miss, "b1")
            guard case .denied(let wait) = held else {
                Issue.record("not held: \(held)")
                return
            }
            #expect(wait > 0 && wait <= 5_000)
            try await Task.sleep(for: .milliseconds(Int(wait) + 50))
            #expect(try await a.ask(.miss, "a0") == .probe, "the first call after the pause is the probe")
            #expect(try await b.ask(.miss, "b2") != .granted, "the others wait for the probe's answer")
            try await budgets[0].reopen(probe: "a0")
            #expect(try await b.ask(.miss, "b3") == .granted)
        }
    }

    @Test
    func aCallCountsUntilItsGrantPlusACallsTimeThenFromWhenItCameBackAndAgainIfTheWindowDroppedIt() async throws {
        // A window of 4 s and calls of up to 12 s: the margins outlast a loaded machine's late wake-ups.
        try await withBudget(limit: 1, window: 4_000, callTimeout: 12_000) { budget, redis in
            let replica = Replica(budget)
            #expect(try await replica.ask(.miss, "slow") == .granted)
            // Past a window from its grant, but not back yet: it counts until its grant plus a
            // call's time, then a window.
            try await Task.sleep(for: .milliseconds(4_500))
            #expect(try await replica.ask(.miss, "next") != .granted, "amodb may not have seen it yet")
            let before = try await redisMilliseconds(redis)
            try await budget.complete("slow", laterMilliseconds: 0)
            let after = try await redisMilliseconds(redis)
            let score = try #require(try await redis.send(["ZSCORE", .bulk(budget.callsKey), "slow"]).string)
            // Redis's own clock on either side: no margin for how long a loaded machine took.
            #expect(((before - 1)...(after + 1)).contains(Int64(Double(score)!)), "counted from when it came back")
            // A call that came back after the window dropped it (a frozen replica) counts again.
            try await Task.sleep(for: .milliseconds(4_500))
            _ = try await replica.ask(.miss, "trim")  // trims what left the window (and may take the call)
            #expect(try await redis.send(["ZSCORE", .bulk(budget.callsKey), "slow"]).string == nil)
            try await budget.complete("slow", laterMilliseconds: 0)
            #expect(try await redis.send(["ZSCORE", .bulk(budget.callsKey), "slow"]).string != nil)
        }
    }

    @Test
    func aCallGivenUpWithNoAnswerCountsFromACallsTimeAfterItWasGivenUp() async throws {
        try await withBudget(limit: 1, callTimeout: 12_000) { budget, redis in
            let replica = Replica(budget)
            #expect(try await replica.ask(.miss, "timed-out") == .granted)
            let before = try await redisMilliseconds(redis)
            try await budget.complete("timed-out", laterMilliseconds: 12_000)
            let after = try await redisMilliseconds(redis)
            let score = try #require(try await redis.send(["ZSCORE", .bulk(budget.callsKey), "timed-out"]).string)
            let counted = Int64(Double(score)!)
            #expect(
                counted >= before + 12_000 && counted <= after + 12_000,
                "counted from a call's time after it was given up: \(counted - before) ms after the call")
        }
    }

    @Test
    func amodbsOwnHeadersSeenByOneReplicaBindTheOthers() async throws {
        try await withBudget(limit: 40, replicas: 2) { budgets, _ in
            let b = Replica(budgets[1], name: "b")
            try await budgets[0].observe(limit: 3, remaining: nil, resetMilliseconds: nil)
            var granted = 0
            for index in 0..<6 where try await b.ask(.miss, "b\(index)") == .granted { granted += 1 }
            #expect(granted == 3, "amodb's stricter limit binds every replica")
        }
        try await withBudget(limit: 40, replicas: 2) { budgets, _ in
            let b = Replica(budgets[1], name: "b")
            try await budgets[0].observe(limit: nil, remaining: 2, resetMilliseconds: 30_000)
            var granted = 0
            for index in 0..<6 where try await b.ask(.miss, "b\(index)") == .granted { granted += 1 }
            #expect(granted == 2, "what amodb said remains binds every replica until it resets")
        }
    }

    @Test
    func twoReplicasTogetherNeverPassTheLimit() async throws {
        try await withBudget(limit: 10, replicas: 2) { budgets, _ in
            let replicas = [Replica(budgets[0], name: "a"), Replica(budgets[1], name: "b")]
            let granted = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<40 {
                    group.addTask { try await replicas[index % 2].ask(.miss, "c\(index)") == .granted }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(granted == 10)
        }
    }
}

/// Lost state: every way the window's state can vanish or roll back is told from a new
/// window, and a lost one grants nothing for a window and a call's time.
extension SharedBudgetTests {
    @Test(arguments: ["FLUSHALL", "DEL state", "DEL calls", "older snapshot", "another Redis process"])
    func aLostWindowGrantsNothingForAWindowAndACallsTime(_ loss: String) async throws {
        try await withBudget(limit: 10, callTimeout: 2_000) { budget, redis in
            let replica = Replica(budget)
            for index in 0..<3 { #expect(try await replica.ask(.miss, "c\(index)") == .granted) }
            switch loss {
            case "FLUSHALL": _ = try await redis.send(["FLUSHALL"])
            case "DEL state": _ = try await redis.send(["DEL", .bulk(budget.stateKey)])
            case "DEL calls": _ = try await redis.send(["DEL", .bulk(budget.callsKey)])
            case "older snapshot":
                // As a restart from an RDB saved before the last grants: fewer calls, a smaller number.
                _ = try await redis.send(["HSET", .bulk(budget.stateKey), "seq", "1"])
                _ = try await redis.send(["ZREMRANGEBYRANK", .bulk(budget.callsKey), "1", "-1"])
            default:
                // The state was written by a Redis process other than the one running now.
                _ = try await redis.send(["HSET", .bulk(budget.stateKey), "run", "0123456789abcdef"])
            }
            let decision = try await replica.ask(.miss, "after")
            guard case .paused(.lost, let wait) = decision else {
                Issue.record("\(loss): not paused as lost: \(decision)")
                return
            }
            #expect(wait > 50_000 && wait <= 62_000, "a window and a call's time: \(wait) ms")
            // Any replica, new or not, is held too: the loss is marked in Redis, and a heartbeat says so.
            #expect(try await Replica(budget, name: "new").ask(.miss, "n0").isPausedAsLost)
            let beat = try await budget.window(seen: replica.seen, replica: "test")
            #expect(beat.pause == .lost && beat.wait > 50_000)
        }
    }

    @Test
    func aWindowNoReplicaRemembersSettlesThenGrantsAndARememberingReplicaMarksAStartedOneLost() async throws {
        try await withBudget(limit: 10, callTimeout: 1_000, settle: 3_000) { budget, redis in
            let fresh = Replica(budget, name: "fresh")
            let first = try await fresh.ask(.miss, "f0")
            guard case .paused(.settling, let wait) = first else {
                Issue.record("a new window does not settle: \(first)")
                return
            }
            #expect(wait <= 3_000)
            try await Task.sleep(for: .milliseconds(Int(wait) + 50))
            #expect(try await fresh.ask(.miss, "f1") == .granted)
            // Lost, and started again by a replica that remembers nothing...
            _ = try await redis.send(["FLUSHALL"])
            #expect(try await Replica(budget, name: "other").ask(.miss, "o0").isSettling)
            #expect(try await budget.window(seen: .nothing, replica: "other").pause == .settling)
            // ...until one that saw the old window says so: lost from the new one's start.
            #expect(try await fresh.ask(.miss, "f2").isPausedAsLost)
        }
    }

    @Test
    func theReserveCallsPutBackCountOnceAndAgainstTheWindow() async throws {
        try await withBudget(limit: 4) { budget, _ in
            let replica = Replica(budget)
            #expect(try await replica.ask(.miss, "c0") == .granted)
            let calls = [
                SharedBudget.PutBack(id: "r0", ageMilliseconds: 1_000), .init(id: "r1", ageMilliseconds: 0),
                .init(id: "old", ageMilliseconds: 61_000),
            ]
            for _ in 0..<3 {
                let state = try await budget.window(seen: replica.seen, replica: "test", putBack: calls)
                #expect(state.pause == nil)
                replica.seen = state.seen
            }
            #expect(try await budget.used() == 3, "each once, and none older than the window")
            #expect(try await replica.ask(.miss, "c1") == .granted)
            #expect(try await replica.ask(.miss, "c2") != .granted)
        }
    }
}

/// Each client's share of the window's calls, checked by the same script in the same step.
extension SharedBudgetTests {
    @Test
    func aClientsShareIsTakenWithTheWindowsCallAndASpentShareTakesNone() async throws {
        try await withBudget(limit: 10) { budget, _ in
            let replica = Replica(budget)
            let greedy = try #require(budget.share(named: "0a1b2c", calls: 3))
            var decisions: [SharedBudget.Decision] = []
            for index in 0..<5 { decisions.append(try await replica.ask(.miss, "g\(index)", share: greedy)) }
            #expect(decisions.prefix(3).allSatisfy { $0 == .granted })
            for decision in decisions.suffix(2) {
                guard case .shareSpent(let wait) = decision else {
                    Issue.record("not share-spent: \(decision)")
                    continue
                }
                #expect(wait > 40_000 && wait <= 60_000)
            }
            #expect(try await budget.used() == 3, "a miss its share refused took no call")
            let other = try #require(budget.share(named: "ffee", calls: 3))
            #expect(try await replica.ask(.miss, "o0", share: other) == .granted)
        }
    }

    @Test
    func aCallTheWindowRefusesIsNotChargedToTheShare() async throws {
        try await withBudget(limit: 2) { budget, _ in
            let replica = Replica(budget)
            let client = try #require(budget.share(named: "c1", calls: 2))
            #expect(try await replica.ask(.miss, "x0") == .granted)
            #expect(try await replica.ask(.miss, "x1") == .granted)
            for index in 0..<5 {
                let refused = try await replica.ask(.miss, "c\(index)", share: client)
                guard case .denied = refused else {
                    Issue.record("the window's refusal expected, not \(refused)")
                    continue
                }
            }
            let standing = try await budget.standing(client)
            #expect(standing.left == 2 && standing.wait == nil, "nothing charged")
        }
    }

    @Test
    func aShareSeenByOneReplicaBindsTheOthersEvenAtOnce() async throws {
        try await withBudget(limit: 40, replicas: 2) { budgets, _ in
            let replicas = [Replica(budgets[0], name: "a"), Replica(budgets[1], name: "b")]
            let share = try #require(budgets[0].share(named: "client", calls: 5))
            let granted = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<30 {
                    group.addTask { try await replicas[index % 2].ask(.miss, "r\(index)", share: share) == .granted }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(granted == 5)
            #expect(try await budgets[1].used() == 5)
        }
    }

    @Test
    func peekingAtAShareTakesNothing() async throws {
        try await withBudget(limit: 10) { budget, _ in
            let replica = Replica(budget)
            let client = try #require(budget.share(named: "peek", calls: 1))
            for _ in 0..<3 {
                let standing = try await budget.standing(client)
                #expect(standing.left == 1 && standing.wait == nil)
            }
            #expect(try await replica.ask(.miss, "p0", share: client) == .granted)
            #expect(try await budget.standing(client).left == 0)
            #expect(try await budget.used() == 1)
        }
    }

    @Test
    func aShareKeyHoldsAtMostItsCallsAndExpiresAWindowAfterTheLastOne() async throws {
        try await withBudget(limit: 100, window: 500) { budget, redis in
            let replica = Replica(budget)
            let client = try #require(budget.share(named: "abc", calls: 2))
            #expect(client.key == "amodb-proxy:share:abc")
            for index in 0..<6 { _ = try await replica.ask(.miss, "a\(index)", share: client) }
            let held = try #require(try await redis.send(["ZCARD", "amodb-proxy:share:abc"]).integer)
            #expect(held <= 2)
            #expect(
                await eventually { (try? await redis.send(["EXISTS", "amodb-proxy:share:abc"]).integer) == 0 },
                "gone a window after the client's last call")
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

/// One replica's view of the window: what it saw last, passed with every request, as
/// `RedisCallBudget` does.
private final class Replica: @unchecked Sendable {
    let budget: SharedBudget
    let name: String
    var seen = SharedBudget.Seen.nothing

    init(_ budget: SharedBudget, name: String = "test") {
        self.budget = budget
        self.name = name
    }

    func ask(_ priority: SharedBudget.Priority, _ id: String, share: SharedBudget.Share? = nil) async throws
        -> SharedBudget.Decision
    {
        let (decision, seen) = try await budget.acquire(priority, callID: id, seen: seen, replica: name, share: share)
        self.seen = seen
        return decision
    }
}

extension SharedBudget.Decision {
    /// Denied for about `milliseconds` (within 20 s: a loaded machine's test may take that long).
    fileprivate func waitsAbout(_ milliseconds: Int64) -> Bool {
        guard case .denied(let wait) = self else { return false }
        return wait <= milliseconds && wait > milliseconds - 20_000
    }

    fileprivate var isPausedAsLost: Bool {
        if case .paused(.lost, _) = self { return true }
        return false
    }

    fileprivate var isSettling: Bool {
        if case .paused(.settling, _) = self { return true }
        return false
    }
}

/// Redis's clock now, in milliseconds.
private func redisMilliseconds(_ redis: RedisClient) async throws -> Int64 {
    let reply = try await redis.send(["TIME"])
    guard case .array(let parts) = reply, parts.count == 2, let seconds = parts[0].string.flatMap(Int64.init),
        let micros = parts[1].string.flatMap(Int64.init)
    else { throw RedisError.unexpectedReply(reply.description) }
    return seconds * 1000 + micros / 1000
}

/// Runs `body` with budgets of `limit` (one per replica, each its own connection) on a fresh
/// server and a client of its own; a window that needs no settling, calls that take no time
/// unless asked.
private func withBudget(
    limit: Int, replicas: Int = 1, window: Int64 = 60_000, callTimeout: Int64 = 0, settle: Int64 = 0,
    _ body: ([SharedBudget], RedisClient) async throws -> Void
) async throws {
    try await withRedisServer { server in
        try await withRedisClient(server.configuration()) { observer in
            var clients: [RedisClient] = []
            for _ in 0..<replicas { clients.append(RedisClient(configuration: server.configuration())) }
            let budgets = clients.map {
                SharedBudget(
                    client: $0, prefix: "amodb-proxy:", limit: limit, windowMilliseconds: window,
                    callTimeoutMilliseconds: callTimeout, settleMilliseconds: settle)
            }
            try await body(budgets, observer)
            for client in clients { await client.shutdown() }
        }
    }
}

private func withBudget(
    limit: Int, window: Int64 = 60_000, callTimeout: Int64 = 0, settle: Int64 = 0,
    _ body: (SharedBudget, RedisClient) async throws -> Void
) async throws {
    try await withBudget(limit: limit, replicas: 1, window: window, callTimeout: callTimeout, settle: settle) {
        try await body($0[0], $1)
    }
}
