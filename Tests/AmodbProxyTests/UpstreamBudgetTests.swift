import AmodbModels
import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

@Suite(.timeLimit(.minutes(1)))
struct UpstreamBudgetTests {
    @Test func neverCallsMoreThanTheLimitInAWindowAndSaysWhenToRetry() async throws {
        let fetcher = ScriptedUpstream(fallback: .status(200, ScriptedUpstream.movieDetails))
        let clock = ManualClock()
        let proxy = try ProxyHarness(
            configuration: ProxyHarness.configuration { $0.rateLimit = 8 }, fetcher: fetcher, clock: clock)
        try await withServer(proxy) { _ in
            var statuses: [Int] = []
            for id in 1...20 {
                let response = try await proxy.get("/3/movie/\(id)")
                statuses.append(response.status)
                if response.status == 503 {
                    #expect(response.header("Retry-After") == "60")
                    #expect(response.header("Cache-Status") == "amodb-proxy; fwd=miss; detail=budget-exhausted")
                }
            }
            // Misses may use every call of the window: nothing is held back for refreshes.
            #expect(fetcher.calls.count == 8)
            #expect(statuses.filter { $0 == 200 }.count == 8)
            #expect(statuses.filter { $0 == 503 }.count == 12)
            #expect(proxy.proxy.statistics.value(.missRefused, kind: .movie) == 12)

            clock.advance(by: 61)
            #expect(try await proxy.get("/3/movie/100").status == 200)
            #expect(fetcher.calls.count == 9)
        }
    }

    @Test func aRefreshWaitsForSlackOnceTheWindowIsHalfSpent() async throws {
        let fetcher = ScriptedUpstream(fallback: .status(200, ScriptedUpstream.movieDetails))
        let clock = ManualClock()
        let proxy = try ProxyHarness(
            configuration: ProxyHarness.configuration {
                $0.rateLimit = 8
                $0.movieTTL = 10
            }, fetcher: fetcher, clock: clock)
        try await withServer(proxy) { _ in
            for id in 1...3 { _ = try await proxy.get("/3/movie/\(id)") }
            #expect(fetcher.calls.count == 3)
            clock.advance(by: 11)  // entries stale, the window not over
            _ = try await proxy.get("/3/movie/1")  // 3 of 8 spent: a refresh leaves it half spent
            #expect(await eventually { fetcher.calls.count == 4 })
            let second = try await proxy.get("/3/movie/2")  // half spent: the refresh waits for slack
            #expect(second.status == 200)
            #expect(second.header("Cache-Status") == "amodb-proxy; fwd=stale; ttl=-1; detail=budget")
            #expect(proxy.proxy.statistics.value(.staleForBudget) == 1)
            #expect(proxy.proxy.statistics.value(.refreshDeferred, kind: .movie) == 1)
            #expect(fetcher.calls.count == 4)
            // A miss has nothing stored to answer with: it may take every call that is left.
            for id in 4...7 { #expect(try await proxy.get("/3/movie/\(id)").status == 200) }
            #expect(fetcher.calls.count == 8)
        }
    }

    @Test func aRefreshOfAnEntryOlderThanTwiceItsLifetimeGoesFirst() async throws {
        let fetcher = ScriptedUpstream(fallback: .status(200, ScriptedUpstream.movieDetails))
        let clock = ManualClock()
        let proxy = try ProxyHarness(
            configuration: ProxyHarness.configuration {
                $0.rateLimit = 8
                $0.movieTTL = 10
            }, fetcher: fetcher, clock: clock)
        try await withServer(proxy) { _ in
            for id in 1...2 { _ = try await proxy.get("/3/movie/\(id)") }
            clock.advance(by: 15)
            for id in 3...7 { _ = try await proxy.get("/3/movie/\(id)") }  // 7 of 8 spent
            let drifting = try await proxy.get("/3/movie/1")  // 15 s old: waits for slack
            #expect(drifting.header("Cache-Status")?.hasSuffix("detail=budget") == true)
            #expect(fetcher.calls.count == 7)
            clock.advance(by: 6)  // 21 s old, past twice its lifetime; the window still 7 of 8
            let overdue = try await proxy.get("/3/movie/2")
            #expect(overdue.header("Cache-Status") == "amodb-proxy; fwd=stale; ttl=-11")
            #expect(await eventually { fetcher.calls.count == 8 }, "refreshed from the last call of the window")
        }
    }

    @Test func adoptsAmodbsStricterLimitHeaders() async throws {
        let fetcher = ScriptedUpstream(
            fallback: .status(
                200, ScriptedUpstream.movieDetails,
                headers: [
                    "x-ratelimit-limit": "20", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "30",
                ]))
        let clock = ManualClock()
        let proxy = try ProxyHarness(
            configuration: ProxyHarness.configuration { $0.rateLimit = 40 }, fetcher: fetcher, clock: clock)
        try await withServer(proxy) { _ in
            #expect(try await proxy.get("/3/movie/1").status == 200)
            let refused = try await proxy.get("/3/movie/2")
            #expect(refused.status == 503)
            #expect(refused.header("Retry-After") == "30")
            #expect(fetcher.calls.count == 1)
        }
    }

    @Test(arguments: [2.0, 0])
    func aMissWaitsForACallThatFreesWithinItsWaitInsteadOfA503(wait: Double) async throws {
        // amodb says its window has no call left for one more second.
        let fetcher = ScriptedUpstream(
            fallback: .status(
                200, ScriptedUpstream.movieDetails,
                headers: [
                    "x-ratelimit-limit": "40", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "1",
                ]))
        var configuration = ProxyHarness.configuration()
        configuration.missWait = wait
        // Without a wait, a clock held still makes the refusal certain; with one, time must pass.
        let clock: any ProxyClock = wait > 0 ? SystemClock() : ManualClock()
        let proxy = try ProxyHarness(configuration: configuration, fetcher: fetcher, clock: clock)
        try await withServer(proxy) { _ in
            #expect(try await proxy.get("/3/movie/1").status == 200)
            let next = try await proxy.get("/3/movie/2")
            if wait > 0 {
                #expect(next.status == 200, "served once the call freed, within AMODB_MISS_WAIT")
                #expect(fetcher.calls.count == 2)
            } else {
                #expect(next.status == 503)
                #expect(fetcher.calls.count == 1)
            }
        }
    }

    @Test func a429SpendsTheWindowForEveryone() async throws {
        let fetcher = ScriptedUpstream(fallback: .status(429, headers: ["retry-after": "45"]))
        let clock = ManualClock()
        let proxy = try ProxyHarness(fetcher: fetcher, clock: clock)
        try await withServer(proxy) { _ in
            let first = try await proxy.get("/3/movie/1")
            #expect(first.status == 503)
            #expect(first.header("Retry-After") == "45")
            let second = try await proxy.get("/3/movie/2")
            #expect(second.status == 503)
            #expect(second.header("Cache-Status") == "amodb-proxy; fwd=miss; detail=budget-exhausted")
            #expect(fetcher.calls.count == 1, "no call while amodb said to wait")
        }
    }

    @Test func waitersOnAFailedFetchShareOneAnswer() async throws {
        let fetcher = ScriptedUpstream(fallback: .status(500))
        fetcher.hold()  // the one call stays in flight until all thirty have joined it
        let clock = ManualClock()
        let proxy = try ProxyHarness(fetcher: fetcher, clock: clock)
        try await withServer(proxy) { _ in
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<30 { group.addTask { try await proxy.get("/3/trending/tv/week").status } }
                #expect(await eventually { fetcher.heldCount == 1 && proxy.proxy.statistics.value(.collapsed) == 29 })
                fetcher.release()
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses == Array(repeating: 502, count: 30))
            #expect(fetcher.calls.count == 1)
        }
    }
}
