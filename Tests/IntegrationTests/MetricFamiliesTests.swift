import AmodbProxy
import AmodbSandbox
import AmodbTestSupport
import Foundation
import Testing

/// Every metric family docs/operations.md lists is exposed with its type, and the families the
/// other tests do not reach count what happened: budget denials, cache events, stale
/// answers for revalidation and for the budget, upstream timeouts and unreachable amodb.
@Suite(.timeLimit(.minutes(1)))
struct MetricFamiliesTests {
    /// `(family, type)` from docs/operations.md's table of what every replica exports (the
    /// fleet's, exported only with Redis, are `GrafanaDashboardTests`' to check).
    static func documentedFamilies() throws -> [(name: String, type: String)] {
        try DocumentedMetrics.families().filter { !$0.fleet }.map { ($0.name, $0.type) }
    }

    @Test func everyFamilyTheREADMEListsIsExposedWithItsType() async throws {
        let families = try Self.documentedFamilies()
        #expect(families.count >= 13, "the metrics table was read: \(families.map(\.name))")
        let harness = try ProxyHarness(.live, fetcher: ScriptedUpstream())
        try await withServer(harness) { harness in
            #expect(try await harness.get("/3/trending/movie/day").status == 200)  // so the counters have a series
            let metrics = try await harness.metrics()
            for family in families {
                #expect(metrics.types[family.name] == family.type, "\(family.name)")
                let sampleNames = family.type == "histogram" ? [family.name + "_count"] : [family.name]
                for name in sampleNames { #expect(throws: Never.self, "\(name)") { try metrics.value(name) } }
            }
        }
    }

    @Test func budgetDenialsStaleForBudgetAndCacheEventsAreCounted() async throws {
        let clock = ManualClock()
        var configuration = ProxyHarness.configuration()
        configuration.rateLimit = 1
        configuration.cacheTTL = 10
        let harness = try ProxyHarness(.live, configuration: configuration, fetcher: ScriptedUpstream(), clock: clock)
        try await withServer(harness) { harness in
            var statuses: [Int] = []
            statuses.append(try await harness.get("/3/trending/movie/day").status)  // the window's one call
            statuses.append(try await harness.get("/3/trending/movie/day").status)  // hit
            statuses.append(try await harness.get("/3/trending/tv/day").status)  // miss, denied: 503
            clock.advance(by: 11)
            let stale = try await harness.get("/3/trending/movie/day")  // stale, refresh denied
            statuses.append(stale.status)
            #expect(statuses == [200, 200, 503, 200])
            #expect(stale.header("Cache-Status") == "amodb-proxy; fwd=stale; ttl=-1; detail=budget")

            let metrics = try await harness.metrics()
            #expect(try metrics.value("amodb_proxy_upstream_budget_denials_total") == 2)
            #expect(try metrics.value("amodb_proxy_stale_responses_total", ["reason": "budget"]) == 1)
            #expect(try metrics.value("amodb_proxy_stale_responses_total", ["reason": "revalidate"]) == 0)
            let trending = ["route": "/3/trending/{media_type}/{time_window}"]
            let movie = ["route": "/3/movie/{movie_id}"]
            #expect(try metrics.value("amodb_proxy_budget_refreshes_deferred_total", trending) == 1)
            #expect(try metrics.value("amodb_proxy_budget_misses_refused_total", trending) == 1)
            #expect(try metrics.value("amodb_proxy_budget_refreshes_deferred_total", movie) == 0)
            #expect(try metrics.value("amodb_proxy_budget_misses_refused_total", movie) == 0)
            let events = [
                "hit": 1.0, "miss": 2, "budget_denial": 2, "stale_budget": 1, "upstream_call": 1, "refresh": 0,
            ]
            for (event, count) in events {
                #expect(try metrics.value("amodb_proxy_cache_events_total", ["event": event]) == count, "\(event)")
            }
        }
    }

    @Test func aStaleAnswerWhileRefreshingCountsAsRevalidate() async throws {
        let clock = ManualClock()
        let fetcher = ScriptedUpstream()
        let harness = try ProxyHarness(.live, fetcher: fetcher, clock: clock)
        try await withServer(harness) { harness in
            #expect(try await harness.get("/3/trending/movie/day").status == 200)
            clock.advance(by: 1801)
            fetcher.hold()
            let stale = try await harness.get("/3/trending/movie/day")
            #expect(stale.header("Cache-Status") == "amodb-proxy; fwd=stale; ttl=-1")
            let metrics = try await harness.metrics()
            #expect(try metrics.value("amodb_proxy_stale_responses_total", ["reason": "revalidate"]) == 1)
            #expect(try metrics.value("amodb_proxy_cache_events_total", ["event": "stale_while_revalidate"]) == 1)
            #expect(try metrics.value("amodb_proxy_cache_events_total", ["event": "refresh"]) == 1)
            fetcher.release()
        }
    }

    @Test func anUpstreamTimeoutIsCountedAsTimeout() async throws {
        let setup = try SandboxedProxy { $0.upstreamTimeout = 0.5 }
        try await withServer(setup) { setup in
            setup.sandbox.hold()  // amodb never answers in time
            let response = try await setup.harness.get("/3/movie/550")
            setup.sandbox.release()
            #expect(response.status == 504)
            let metrics = try await setup.harness.metrics()
            #expect(try metrics.value("amodb_proxy_upstream_requests_total", ["status": "timeout"]) == 1)
            #expect(try metrics.value("amodb_proxy_upstream_requests_total") == 1)
        }
    }

    @Test func anUnreachableAmodbIsCountedAsUnreachable() async throws {
        // Port 1 on loopback: nothing listens, the connection is refused.
        let harness = try ProxyHarness(
            .live, configuration: ProxyHarness.configuration(upstreamURL: "http://127.0.0.1:1/3"))
        try await withServer(harness) { harness in
            let response = try await harness.get("/3/movie/550")
            #expect(response.status == 502)
            let metrics = try await harness.metrics()
            #expect(try metrics.value("amodb_proxy_upstream_requests_total", ["status": "unreachable"]) == 1)
            #expect(try metrics.value("amodb_proxy_upstream_requests_total") == 1)
        }
    }
}
