import AmodbModels
import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

/// The size of one of the forwarder's tables, as `/metrics` reports it; `nil` when the series is missing.
func tableEntries(_ proxy: ProxyHarness, _ table: String) -> Double? {
    guard let samples = try? PrometheusSamples(proxy.proxy.metrics.render()) else { return nil }
    return samples.samples.first { $0.name == "amodb_proxy_forwarder_table_entries" && $0.labels["table"] == table }?.value
}

@Suite(.timeLimit(.minutes(1)))
struct StaleWhileRevalidateTests {
    @Test func servesTheStaleCopyAtOnceWhileOneBackgroundRefreshRuns() async throws {
        let fetcher = ScriptedUpstream()
        let clock = ManualClock()
        let proxy = try ProxyHarness(fetcher: fetcher, clock: clock)
        try await withServer(proxy) { _ in
            _ = try await proxy.get("/3/trending/movie/week")
            clock.advance(by: 1801)
            fetcher.hold()   // amodb does not answer the refresh until every stale answer is in
            let stale = try await withThrowingTaskGroup(of: RawHTTPResponse.self) { group in
                for _ in 0..<20 { group.addTask { try await proxy.get("/3/trending/movie/week") } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(await eventually { fetcher.heldCount == 1 }, "the refresh is in flight, and nobody waited for it")
            fetcher.release()
            #expect(stale.allSatisfy { $0.status == 200 && $0.text == ScriptedUpstream.moviePage })
            #expect(stale.allSatisfy { $0.header("Cache-Status") == "amodb-proxy; fwd=stale; ttl=-1" })
            #expect(stale.allSatisfy { $0.header("Age") == "1801" && $0.header("Cache-Control") == "public, max-age=0" })

            #expect(await eventually { proxy.proxy.statistics.value(.upstreamCall) == 2 })
            #expect(await eventually { proxy.proxy.cache.entry(for: "/trending/movie/week")?.isFresh(at: clock.now()) == true })
            let refreshed = try await proxy.get("/3/trending/movie/week")
            #expect(refreshed.header("Cache-Status")?.hasPrefix("amodb-proxy; hit") == true)
            #expect(refreshed.header("Age") == "0")
            #expect(fetcher.calls.count == 2, "one refresh for twenty stale answers")
            #expect(proxy.proxy.statistics.value(.staleWhileRevalidate) == 20)
        }
    }

    @Test func anEntryOlderThanMaxStaleIsAMiss() async throws {
        let fetcher = ScriptedUpstream()
        let clock = ManualClock()
        let proxy = try ProxyHarness(configuration: ProxyHarness.configuration { $0.maxStaleSeconds = 3600 }, fetcher: fetcher, clock: clock)
        try await withServer(proxy) { _ in
            _ = try await proxy.get("/3/trending/movie/week")
            clock.advance(by: 3601)
            fetcher.setFallback(.status(500))
            let response = try await proxy.get("/3/trending/movie/week")
            #expect(response.status == 502)
            #expect(response.header("Cache-Status") == "amodb-proxy; fwd=miss; fwd-status=500")
        }
    }

    struct FailureMode: Sendable, CustomTestStringConvertible {
        let name: String
        let answer: ScriptedUpstream.Answer
        let cacheStatus: String
        var testDescription: String { name }
    }

    static let failureModes: [FailureMode] = [
        FailureMode(name: "500", answer: .status(500), cacheStatus: "amodb-proxy; fwd=stale; fwd-status=500; ttl=-1; detail=stale-if-error"),
        FailureMode(name: "503", answer: .status(503), cacheStatus: "amodb-proxy; fwd=stale; fwd-status=503; ttl=-1; detail=stale-if-error"),
        FailureMode(name: "timeout", answer: .failure(.timedOut), cacheStatus: "amodb-proxy; fwd=stale; ttl=-1; detail=stale-if-error"),
        FailureMode(name: "unreachable", answer: .failure(.unreachable), cacheStatus: "amodb-proxy; fwd=stale; ttl=-1; detail=stale-if-error"),
        FailureMode(name: "429", answer: .status(429, headers: ["retry-after": "0"]), cacheStatus: "amodb-proxy; fwd=stale; fwd-status=429; ttl=-1; detail=stale-if-error"),
        FailureMode(name: "401", answer: .status(401), cacheStatus: "amodb-proxy; fwd=stale; fwd-status=401; ttl=-1; detail=stale-if-error"),
        FailureMode(name: "402", answer: .status(402), cacheStatus: "amodb-proxy; fwd=stale; fwd-status=402; ttl=-1; detail=stale-if-error"),
        FailureMode(name: "truncated body", answer: .status(200, "{\"page\":1,\"res"), cacheStatus: "amodb-proxy; fwd=stale; fwd-status=200; ttl=-1; detail=stale-if-error"),
    ]

    @Test(arguments: failureModes)
    func keepsServingTheStaleCopyWhenAmodbFails(_ mode: FailureMode) async throws {
        let fetcher = ScriptedUpstream()
        let clock = ManualClock()
        let proxy = try ProxyHarness(fetcher: fetcher, clock: clock)
        try await withServer(proxy) { _ in
            _ = try await proxy.get("/3/trending/movie/week")
            fetcher.setFallback(mode.answer)
            clock.advance(by: 1801)
            #expect(try await proxy.get("/3/trending/movie/week").status == 200)
            let callsAfterRefresh = mode.name == "429" ? 4 : 2   // a 429 is retried twice
            #expect(await eventually { fetcher.calls.count == callsAfterRefresh })
            #expect(await eventually { proxy.proxy.statistics.value(.upstreamCall) == callsAfterRefresh })
            // The refresh has ended once its back-off is remembered.
            #expect(await eventually { tableEntries(proxy, "backoff") == 1 })

            let response = try await proxy.get("/3/trending/movie/week")
            #expect(response.status == 200)
            #expect(response.text == ScriptedUpstream.moviePage)
            #expect(response.header("Cache-Status") == mode.cacheStatus)
            #expect(proxy.proxy.statistics.value(.staleIfError) == 1)
            #expect(fetcher.calls.count == callsAfterRefresh, "no new attempt during the back-off")
        }
    }
}

@Suite(.timeLimit(.minutes(1)))
struct NegativeCachingTests {
    @Test func remembersAmodbs404ForTheNegativeLifetime() async throws {
        let fetcher = ScriptedUpstream(fallback: .status(404, #"{"status_code":34,"status_message":"nope"}"#))
        let clock = ManualClock()
        let proxy = try ProxyHarness(fetcher: fetcher, clock: clock)
        try await withServer(proxy) { _ in
            let first = try await proxy.get("/3/movie/9999999")
            #expect(first.status == 404)
            #expect(first.header("Cache-Status") == "amodb-proxy; fwd=miss; fwd-status=404; stored")
            clock.advance(by: 200)
            let second = try await proxy.get("/3/movie/9999999")
            #expect(second.status == 404)
            #expect(second.header("Cache-Status") == "amodb-proxy; hit; ttl=100")
            #expect(second.header("Cache-Control") == "public, max-age=100")
            #expect(second.text.contains("status_message"))
            #expect(fetcher.calls.count == 1)

            clock.advance(by: 101)
            #expect(try await proxy.get("/3/movie/9999999").status == 404)
            #expect(fetcher.calls.count == 2, "a 404 is not served stale")
        }
    }
}

@Suite(.timeLimit(.minutes(1)))
struct UpstreamBudgetTests {
    @Test func neverCallsMoreThanTheLimitInAWindowAndSaysWhenToRetry() async throws {
        let fetcher = ScriptedUpstream(fallback: .status(200, ScriptedUpstream.movieDetails))
        let clock = ManualClock()
        let proxy = try ProxyHarness(configuration: ProxyHarness.configuration { $0.rateLimit = 8 }, fetcher: fetcher, clock: clock)
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
            #expect(proxy.proxy.statistics.value(.missRefused, kind: Route.movie(id: 1).kindIndex) == 12)

            clock.advance(by: 61)
            #expect(try await proxy.get("/3/movie/100").status == 200)
            #expect(fetcher.calls.count == 9)
        }
    }

    @Test func aRefreshWaitsForSlackOnceTheWindowIsHalfSpent() async throws {
        let fetcher = ScriptedUpstream(fallback: .status(200, ScriptedUpstream.movieDetails))
        let clock = ManualClock()
        let proxy = try ProxyHarness(configuration: ProxyHarness.configuration { $0.rateLimit = 8; $0.movieTTL = 10 }, fetcher: fetcher, clock: clock)
        try await withServer(proxy) { _ in
            for id in 1...3 { _ = try await proxy.get("/3/movie/\(id)") }
            #expect(fetcher.calls.count == 3)
            clock.advance(by: 11)   // entries stale, the window not over
            _ = try await proxy.get("/3/movie/1")   // 3 of 8 spent: a refresh leaves it half spent
            #expect(await eventually { fetcher.calls.count == 4 })
            let second = try await proxy.get("/3/movie/2")   // half spent: the refresh waits for slack
            #expect(second.status == 200)
            #expect(second.header("Cache-Status") == "amodb-proxy; fwd=stale; ttl=-1; detail=budget")
            #expect(proxy.proxy.statistics.value(.staleForBudget) == 1)
            #expect(proxy.proxy.statistics.value(.refreshDeferred, kind: Route.movie(id: 1).kindIndex) == 1)
            #expect(fetcher.calls.count == 4)
            // A miss has nothing stored to answer with: it may take every call that is left.
            for id in 4...7 { #expect(try await proxy.get("/3/movie/\(id)").status == 200) }
            #expect(fetcher.calls.count == 8)
        }
    }

    @Test func aRefreshOfAnEntryOlderThanTwiceItsLifetimeGoesFirst() async throws {
        let fetcher = ScriptedUpstream(fallback: .status(200, ScriptedUpstream.movieDetails))
        let clock = ManualClock()
        let proxy = try ProxyHarness(configuration: ProxyHarness.configuration { $0.rateLimit = 8; $0.movieTTL = 10 }, fetcher: fetcher, clock: clock)
        try await withServer(proxy) { _ in
            for id in 1...2 { _ = try await proxy.get("/3/movie/\(id)") }
            clock.advance(by: 15)
            for id in 3...7 { _ = try await proxy.get("/3/movie/\(id)") }   // 7 of 8 spent
            let drifting = try await proxy.get("/3/movie/1")   // 15 s old: waits for slack
            #expect(drifting.header("Cache-Status")?.hasSuffix("detail=budget") == true)
            #expect(fetcher.calls.count == 7)
            clock.advance(by: 6)   // 21 s old, past twice its lifetime; the window still 7 of 8
            let overdue = try await proxy.get("/3/movie/2")
            #expect(overdue.header("Cache-Status") == "amodb-proxy; fwd=stale; ttl=-11")
            #expect(await eventually { fetcher.calls.count == 8 }, "refreshed from the last call of the window")
        }
    }

    @Test func adoptsAmodbsStricterLimitHeaders() async throws {
        let fetcher = ScriptedUpstream(fallback: .status(200, ScriptedUpstream.movieDetails, headers: [
            "x-ratelimit-limit": "20", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "30",
        ]))
        let clock = ManualClock()
        let proxy = try ProxyHarness(configuration: ProxyHarness.configuration { $0.rateLimit = 40 }, fetcher: fetcher, clock: clock)
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
        let fetcher = ScriptedUpstream(fallback: .status(200, ScriptedUpstream.movieDetails, headers: [
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
        fetcher.hold()   // the one call stays in flight until all thirty have joined it
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

@Suite(.timeLimit(.minutes(1)))
struct CacheKeyTests {
    /// Each group of targets must share one entry (one upstream call, with this path).
    static let groups: [([String], String)] = [
        (["/3/movie/550", "/3/movie/550?language=en-US", "/3/movie/550?language=EN-us", "/3/movie/550?language=de-AT",
          "/3/movie/550?language=xx", "/3/movie/550?language=en", "/3/movie/550?utm_source=ad&api_key=x"],
         "/movie/550"),
        (["/3/movie/550?language=de", "/3/movie/550?language=DE-de", "/3/movie/550?language=de-DE&cb=123"],
         "/movie/550?language=de-DE"),
        (["/3/trending/all/day", "/3/trending/all/day?page=1", "/3/trending/all/day?page=1&language=en-US"],
         "/trending/all/day"),
        (["/3/movie/13?append_to_response=ratings,credits", "/3/movie/13?append_to_response=credits,ratings,credits&language=pt-br"],
         "/movie/13?append_to_response=credits,ratings"),
    ]

    @Test(arguments: 0..<4)
    func variantsShareOneEntry(_ index: Int) async throws {
        let (targets, expected) = Self.groups[index]
        let fetcher = ScriptedUpstream(fallback: .status(200, expected.hasPrefix("/movie") ? ScriptedUpstream.movieDetails : ScriptedUpstream.moviePage))
        let proxy = try ProxyHarness(fetcher: fetcher, clock: ManualClock())
        try await withServer(proxy) { _ async throws in
            for target in targets { #expect(try await proxy.get(target).status == 200, "\(target)") }
            if index == 3 {
                #expect(fetcher.calls == [expected, "/movie/13?append_to_response=credits,ratings&language=pt-BR"])
            } else {
                #expect(fetcher.calls == [expected])
            }
        }
    }
}

@Suite
struct MemoryResponseCacheTests {
    private func entry(_ size: Int, status: Int = 200) -> CachedResponse {
        CachedResponse(status: status, body: Array(repeating: UInt8(ascii: "a"), count: size), storedAt: 0, lifetime: 60)
    }

    /// What one entry of `size` body bytes under a one-character key costs.
    private func cost(_ size: Int) -> Int { size + 1 + MemoryResponseCache.entryOverhead }

    @Test func evictsTheLeastRecentlyUsedBeyondTheByteBudget() {
        // 32 entries of 98 body bytes under 3-byte keys fill the budget exactly.
        let each = 98 + 3 + MemoryResponseCache.entryOverhead
        let cache = MemoryResponseCache(maxBytes: 32 * each, shardCount: 1)
        let keys = (0..<33).map { "k" + ($0 < 10 ? "0" : "") + String($0) }
        for key in keys.prefix(32) { #expect(cache.store(entry(98), for: key)) }
        #expect(cache.usage.bytes == 32 * each)
        _ = cache.entry(for: "k00")   // k00 is now more recent than k01
        #expect(cache.store(entry(98), for: "k32"))
        #expect(cache.entry(for: "k01") == nil)
        #expect(cache.entry(for: "k00") != nil)
        #expect(cache.entry(for: "k32") != nil)
        #expect(cache.usage.entries == 32)
        #expect(cache.usage.bytes == 32 * each)
    }

    @Test func replacingAnEntryCountsItsBytesOnce() {
        let cache = MemoryResponseCache(maxBytes: 1_000_000, shardCount: 4)
        cache.store(entry(500), for: "a")
        cache.store(entry(700), for: "a")
        #expect(cache.usage.entries == 1)
        #expect(cache.usage.bytes == cost(700))
    }

    @Test func countsEachEntrysKeyAndOverheadAgainstTheBudget() {
        // Remembered 404s are small: their count, not their bodies, is what fills memory.
        let maxBytes = 64 * 1024
        let cache = MemoryResponseCache(maxBytes: maxBytes, shardCount: 4)
        for id in 0..<10_000 { cache.store(entry(60, status: 404), for: "/movie/\(1_000_000 + id)") }
        let usage = cache.usage
        #expect(usage.bytes <= maxBytes)
        #expect(usage.entries * (60 + "/movie/1000000".utf8.count + MemoryResponseCache.entryOverhead) == usage.bytes)
        #expect(usage.entries * MemoryResponseCache.entryOverhead <= maxBytes)
    }

    @Test(arguments: [64 * 1024, 1024 * 1024, 64 * 1024 * 1024])
    func refusesAnEntryLargerThanAThirtySecondOfTheBudget(maxBytes: Int) {
        let cache = MemoryResponseCache(maxBytes: maxBytes)
        let largest = maxBytes / MemoryResponseCache.maxEntryFraction
        #expect(!cache.store(entry(largest), for: "big"), "with its key and overhead it is over the bound")
        #expect(cache.entry(for: "big") == nil)
        #expect(cache.usage.entries == 0)
        #expect(cache.store(entry(largest - 1 - MemoryResponseCache.entryOverhead), for: "x"))
    }

    @Test func neverHoldsMoreThanItsBudgetWhateverTheSizes() {
        let maxBytes = 256 * 1024
        let cache = MemoryResponseCache(maxBytes: maxBytes, shardCount: 16)
        var generator = SystemRandomNumberGenerator()
        for index in 0..<2000 {
            // Up to twice a shard's share: an entry that large must never be kept, even alone.
            cache.store(entry(Int.random(in: 0...(maxBytes / 8), using: &generator)), for: "/movie/\(index)")
            #expect(cache.usage.bytes <= maxBytes)
        }
        #expect(cache.allEntries().allSatisfy { $0.entry.body.count < cache.maxEntryBytes })
    }
}
