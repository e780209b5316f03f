import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

/// The size of one of the forwarder's tables, as `/metrics` reports it; `nil` when the series is missing.
private func tableEntries(_ proxy: ProxyHarness, _ table: String) -> Double? {
    guard let samples = try? PrometheusSamples(proxy.proxy.metrics.render()) else { return nil }
    return samples.samples.first { $0.name == "amodb_proxy_forwarder_table_entries" && $0.labels["table"] == table }?
        .value
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
            fetcher.hold()  // amodb does not answer the refresh until every stale answer is in
            let stale = try await withThrowingTaskGroup(of: RawHTTPResponse.self) { group in
                for _ in 0..<20 { group.addTask { try await proxy.get("/3/trending/movie/week") } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(await eventually { fetcher.heldCount == 1 }, "the refresh is in flight, and nobody waited for it")
            fetcher.release()
            #expect(stale.allSatisfy { $0.status == 200 && $0.text == ScriptedUpstream.moviePage })
            #expect(stale.allSatisfy { $0.header("Cache-Status") == "amodb-proxy; fwd=stale; ttl=-1" })
            #expect(
                stale.allSatisfy { $0.header("Age") == "1801" && $0.header("Cache-Control") == "public, max-age=0" })

            #expect(await eventually { proxy.proxy.statistics.value(.upstreamCall) == 2 })
            #expect(
                await eventually {
                    proxy.proxy.cache.entry(for: "/trending/movie/week")?.isFresh(at: clock.now()) == true
                })
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
        let proxy = try ProxyHarness(
            configuration: ProxyHarness.configuration { $0.maxStaleSeconds = 3600 }, fetcher: fetcher, clock: clock)
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
        FailureMode(
            name: "500", answer: .status(500),
            cacheStatus: "amodb-proxy; fwd=stale; fwd-status=500; ttl=-1; detail=stale-if-error"),
        FailureMode(
            name: "503", answer: .status(503),
            cacheStatus: "amodb-proxy; fwd=stale; fwd-status=503; ttl=-1; detail=stale-if-error"),
        FailureMode(
            name: "timeout", answer: .failure(.timedOut),
            cacheStatus: "amodb-proxy; fwd=stale; ttl=-1; detail=stale-if-error"),
        FailureMode(
            name: "unreachable", answer: .failure(.unreachable),
            cacheStatus: "amodb-proxy; fwd=stale; ttl=-1; detail=stale-if-error"),
        FailureMode(
            name: "429", answer: .status(429, headers: ["retry-after": "0"]),
            cacheStatus: "amodb-proxy; fwd=stale; fwd-status=429; ttl=-1; detail=stale-if-error"),
        FailureMode(
            name: "401", answer: .status(401),
            cacheStatus: "amodb-proxy; fwd=stale; fwd-status=401; ttl=-1; detail=stale-if-error"),
        FailureMode(
            name: "402", answer: .status(402),
            cacheStatus: "amodb-proxy; fwd=stale; fwd-status=402; ttl=-1; detail=stale-if-error"),
        FailureMode(
            name: "truncated body", answer: .status(200, "{\"page\":1,\"res"),
            cacheStatus: "amodb-proxy; fwd=stale; fwd-status=200; ttl=-1; detail=stale-if-error"),
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
            let callsAfterRefresh = mode.name == "429" ? 4 : 2  // a 429 is retried twice
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
