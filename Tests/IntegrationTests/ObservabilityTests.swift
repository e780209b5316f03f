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
            _ = try await setup.harness.get("/3/trending/movie/week")          // miss
            _ = try await setup.harness.get("/3/trending/movie/week")          // hit
            _ = try await setup.harness.get("/3/trending/movie/week")          // hit
            _ = try await setup.harness.get("/3/movie/987654321")              // amodb 404
            _ = try await setup.harness.get("/3/movie/550?page=x&language=!")  // 400
            _ = try await setup.harness.get("/3/nothing/here")                 // 404, unmatched
            _ = try await setup.harness.exchange(Array("GET / HTTP/1.1\r\n\r\n".utf8), expecting: 1)   // refused: no Host

            let response = try await setup.harness.get("/metrics")
            #expect(response.status == 200)
            #expect(response.header("Content-Type") == "text/plain; version=0.0.4; charset=utf-8")
            let metrics = try PrometheusSamples(response.text)

            #expect(try metrics.value("amodb_proxy_requests_total", ["route": trending, "status": "200", "cache": "miss"]) == 1)
            #expect(try metrics.value("amodb_proxy_requests_total", ["route": trending, "status": "200", "cache": "hit"]) == 2)
            #expect(try metrics.value("amodb_proxy_requests_total", ["route": "/3/movie/{movie_id}", "status": "404", "cache": "miss"]) == 1)
            #expect(try metrics.value("amodb_proxy_requests_total", ["route": "/3/movie/{movie_id}", "status": "400"]) == 1)
            #expect(try metrics.value("amodb_proxy_requests_total", ["route": "unmatched", "status": "404"]) == 1)
            #expect(try metrics.value("amodb_proxy_requests_total", ["route": "invalid", "status": "400"]) == 1)
            #expect(try metrics.value("amodb_proxy_request_duration_seconds_count", ["route": trending]) == 3)
            #expect(try metrics.value("amodb_proxy_request_duration_seconds_bucket", ["route": trending, "le": "+Inf"]) == 3)
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

@Suite(.timeLimit(.minutes(1)))
struct ReadinessTests {
    @Test func flipsWhenAmodbRejectsTheKeyAndBackWhenItAccepts() async throws {
        let fetcher = ScriptedUpstream()
        fetcher.enqueue(.response(UpstreamResponse(status: 401, body: Array(#"{"status_message":"no"}"#.utf8))))
        let harness = try ProxyHarness(fetcher: fetcher)
        try await withServer(harness) { harness in
            #expect(try await harness.get("/readyz").status == 200, "ready before any call")
            #expect(try await harness.get("/3/trending/movie/week").status == 502)
            let rejected = try await harness.get("/readyz")
            #expect(rejected.status == 503)
            #expect(rejected.text.contains("key"))
            #expect(try await harness.get("/healthz").status == 200, "alive all the same")
            #expect(try await harness.get("/3/trending/movie/week").status == 200)
            #expect(try await harness.get("/readyz").status == 200)
        }
    }

    @Test func isNotReadyWhenTheStandInRejectsTheKey() async throws {
        let setup = try SandboxedProxy(sandbox: .init(apiKey: "a-different-key"))
        try await withServer(setup) { setup in
            #expect(try await setup.harness.get("/readyz").status == 200)
            _ = try await setup.harness.get("/3/movie/550")
            #expect(try await setup.harness.get("/readyz").status == 503)
        }
    }
}

@Suite(.timeLimit(.minutes(1)))
struct AccessLogTests {
    @Test func writesOneJSONLinePerRequestWithoutSecrets() async throws {
        let setup = try SandboxedProxy { $0.clientTokens = [Secret("client-secret-token")] }
        try await withServer(setup) { setup in
            _ = try await setup.harness.get("/3/movie/550?api_key=\(ProxyHarness.key)&language=de-DE", headers: ["Authorization": "Bearer client-secret-token"])
            _ = try await setup.harness.get("/3/movie/550?language=de-DE", headers: ["Authorization": "Bearer client-secret-token"])
            _ = try await setup.harness.get("/3/movie/550", headers: ["Authorization": "Bearer \(ProxyHarness.key)"])   // someone tries the key as a token
            #expect(await eventually { setup.accessLog.all.count == 3 })

            let lines = setup.accessLog.all
            let objects = try lines.map { try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
            #expect(objects.map { $0["status"] as? Int } == [200, 200, 401])
            #expect(objects.map { $0["cache"] as? String } == ["miss", "hit", "none"])
            #expect(objects.allSatisfy { $0["route"] as? String == "/3/movie/{movie_id}" && $0["method"] as? String == "GET" })
            #expect(objects.allSatisfy { $0["client"] as? String == "127.0.0.1" })
            #expect(objects.allSatisfy { $0["duration_ms"] is Double || $0["duration_ms"] is Int })
            #expect((objects[0]["bytes"] as? Int ?? 0) > 100)
            #expect(objects.allSatisfy { ($0["time"] as? String)?.hasSuffix("Z") == true })
            for line in lines + setup.logLines {
                #expect(!line.contains(ProxyHarness.key))
                #expect(!line.contains("client-secret-token"))
                #expect(!line.contains("api_key"))
            }
        }
    }

    @Test func canWriteText() async throws {
        let setup = try SandboxedProxy { $0.logFormat = .text }
        try await withServer(setup) { setup in
            _ = try await setup.harness.get("/3/trending/tv/day")
            #expect(await eventually { setup.accessLog.all.count == 1 })
            let line = try #require(setup.accessLog.all.first)
            #expect(line.contains(" method=GET route=/3/trending/{media_type}/{time_window} key=/trending/tv/day status=200 cache=miss "))
            #expect(line.contains(" client=127.0.0.1"))
        }
    }

    @Test func checkConfigRedactsSecrets() throws {
        var configuration = ProxyHarness.configuration()
        configuration.clientTokens = [Secret("tok-1"), Secret("tok-2")]
        configuration.corsOrigins = ["https://app.example.com"]
        let text = ConfigurationLoader.describe(configuration)
        #expect(text.contains("AMODB_KEY=<redacted>"))
        #expect(text.contains("AMODB_PROXY_TOKENS=<2 redacted>"))
        #expect(text.contains("AMODB_CORS_ORIGINS=https://app.example.com"))
        #expect(text.contains("PORT=0"))
        #expect(!text.contains(ProxyHarness.key))
        #expect(!text.contains("tok-1"))
        // What it prints is itself a valid settings file.
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("check-\(UUID().uuidString).conf").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try text.replacingOccurrences(of: "AMODB_KEY=<redacted>", with: "AMODB_KEY=k")
            .replacingOccurrences(of: "AMODB_PROXY_TOKENS=<2 redacted>", with: "AMODB_PROXY_TOKENS=a,b")
            .write(toFile: path, atomically: true, encoding: .utf8)
        guard case .serve(let reloaded) = try ConfigurationLoader.load(arguments: ["--config", path], environment: [:]) else {
            Issue.record("not a serve command")
            return
        }
        #expect(reloaded.corsOrigins == configuration.corsOrigins)
        #expect(reloaded.port == 0)
    }
}
