import AmodbProxy
import AmodbSandbox
import AmodbTestSupport
import Foundation
import Testing

@Suite(.timeLimit(.minutes(1)))
struct MetricsTests {
    @Test func reportsWhatTheTestDid() async throws {
        let setup = try SandboxedProxy()
        try await withServer(setup) { setup in
            let trending = "/3/trending/{media_type}/{time_window}"
            _ = try await setup.harness.get("/3/trending/movie/week")  // miss
            _ = try await setup.harness.get("/3/trending/movie/week")  // hit
            _ = try await setup.harness.get("/3/trending/movie/week")  // hit
            _ = try await setup.harness.get("/3/movie/987654321")  // amodb 404
            _ = try await setup.harness.get("/3/movie/550?page=x&language=!")  // 400
            _ = try await setup.harness.get("/3/nothing/here")  // 404, unmatched
            // refused: no Host
            _ = try await setup.harness.exchange(Array("GET / HTTP/1.1\r\n\r\n".utf8), expecting: 1)

            let response = try await setup.harness.get("/metrics")
            #expect(response.status == 200)
            #expect(response.header("Content-Type") == "text/plain; version=0.0.4; charset=utf-8")
            let metrics = try PrometheusSamples(response.text)

            #expect(
                try metrics.value("amodb_proxy_requests_total", ["route": trending, "status": "200", "cache": "miss"])
                    == 1)
            #expect(
                try metrics.value("amodb_proxy_requests_total", ["route": trending, "status": "200", "cache": "hit"])
                    == 2)
            #expect(
                try metrics.value(
                    "amodb_proxy_requests_total", ["route": "/3/movie/{movie_id}", "status": "404", "cache": "miss"])
                    == 1)
            #expect(
                try metrics.value("amodb_proxy_requests_total", ["route": "/3/movie/{movie_id}", "status": "400"]) == 1)
            #expect(try metrics.value("amodb_proxy_requests_total", ["route": "unmatched", "status": "404"]) == 1)
            #expect(try metrics.value("amodb_proxy_requests_total", ["route": "invalid", "status": "400"]) == 1)
            #expect(try metrics.value("amodb_proxy_request_duration_seconds_count", ["route": trending]) == 3)
            #expect(
                try metrics.value("amodb_proxy_request_duration_seconds_bucket", ["route": trending, "le": "+Inf"]) == 3
            )
            #expect(try metrics.value("amodb_proxy_upstream_requests_total", ["status": "200"]) == 1)
            #expect(try metrics.value("amodb_proxy_upstream_requests_total", ["status": "404"]) == 1)
            #expect(try metrics.value("amodb_proxy_upstream_requests_total") == Double(setup.sandbox.totalRequestCount))
            #expect(try metrics.value("amodb_proxy_upstream_request_duration_seconds_count") == 2)
            #expect(try metrics.value("amodb_proxy_cache_entries") == 2, "the page and the remembered 404")
            #expect(try metrics.value("amodb_proxy_cache_bytes") > 1000)
            #expect(try metrics.value("amodb_proxy_upstream_budget_used") == 2)
            #expect(try metrics.value("amodb_proxy_upstream_budget_limit") == 40)
            #expect(try metrics.value("amodb_proxy_upstream_budget_remaining") == 38)
            #expect(try metrics.value("amodb_proxy_open_connections") >= 1)
            #expect(try metrics.value("amodb_proxy_stale_responses_total", ["reason": "error"]) == 0)
            #expect(metrics.types["amodb_proxy_requests_total"] == "counter")
            #expect(metrics.types["amodb_proxy_request_duration_seconds"] == "histogram")
            #expect(metrics.types["amodb_proxy_cache_entries"] == "gauge")
            #expect(!response.text.contains(ProxyHarness.key))
        }
    }
}
