import AmodbProxy
import AmodbTestSupport
import Testing

/// The budget adopts amodb's limit headers in both spellings, `X-RateLimit-*` and the
/// IETF draft's `RateLimit-*`: when amodb says nothing remains, no further miss is sent.
@Suite(.timeLimit(.minutes(1)))
struct RateLimitHeaderAdoptionTests {
    @Test("amodb's remaining-calls header stops further calls", arguments: ["x-ratelimit-", "ratelimit-"])
    func amodbsRemainingCallsAreAdopted(prefix: String) async throws {
        let fetcher = ScriptedUpstream()
        fetcher.enqueue(
            .response(
                UpstreamResponse(
                    status: 200, headers: [prefix + "limit": "40", prefix + "remaining": "0", prefix + "reset": "30"],
                    body: Array(ScriptedUpstream.moviePage.utf8))))
        let harness = try ProxyHarness(.live, fetcher: fetcher, clock: ManualClock())
        try await withServer(harness) { harness in
            #expect(try await harness.get("/3/trending/movie/day").status == 200)
            let refused = try await harness.get("/3/trending/tv/day")
            #expect(refused.status == 503)
            #expect(refused.header("Cache-Status") == "amodb-proxy; fwd=miss; detail=budget-exhausted")
            #expect(refused.header("Retry-After") == "30")
            #expect(fetcher.calls == ["/trending/movie/day"])
        }
    }

    @Test("amodb's stricter limit header is adopted", arguments: ["x-ratelimit-", "ratelimit-"])
    func amodbsStricterLimitIsAdopted(prefix: String) async throws {
        // Our own limit is 40; amodb says 2 (below 4 no reserve is kept for refreshes).
        let fetcher = ScriptedUpstream(
            fallback: .response(
                UpstreamResponse(
                    status: 200, headers: [prefix + "limit": "2"], body: Array(ScriptedUpstream.moviePage.utf8))))
        let harness = try ProxyHarness(.live, fetcher: fetcher, clock: ManualClock())
        try await withServer(harness) { harness in
            var statuses: [Int] = []
            for path in ["/3/trending/movie/day", "/3/trending/movie/week", "/3/trending/tv/day"] {
                statuses.append(try await harness.get(path).status)
            }
            #expect(statuses == [200, 200, 503])
            #expect(fetcher.calls.count == 2)
        }
    }
}
