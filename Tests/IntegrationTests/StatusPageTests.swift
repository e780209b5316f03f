import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

/// `/status.json` says what the counters say, in its documented shape; `/status` is one
/// self-contained page whose only script runs by a fresh nonce; neither gets CORS.
@Suite(.timeLimit(.minutes(1)))
struct StatusPageTests {
    private func document(_ harness: ProxyHarness) async throws -> [String: Any] {
        let response = try await harness.get("/status.json")
        #expect(response.status == 200)
        #expect(response.header("Content-Type")?.hasPrefix("application/json") == true)
        #expect(response.header("Cache-Control") == "no-store")
        #expect(!response.text.contains(ProxyHarness.key))
        return try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }

    @Test func theJSONTwinCountsWhatTheProxyDidAndAgreesWithMetrics() async throws {
        // A plan of 2 calls a minute: the third path missed gets no call, and a 503.
        let setup = try SandboxedProxy(adjust: {
            $0.rateLimit = 2
            $0.missWait = 0.1
            $0.clientUpstreamShare = 1
        })
        try await withServer(setup) { setup in
            let harness = setup.harness
            for target in [
                "/3/trending/movie/week", "/3/trending/movie/week", "/3/trending/movie/week", "/3/movie/550",
            ] {
                #expect(try await harness.get(target).status == 200)
            }
            #expect(try await harness.get("/3/movie/551").status == 503)
            #expect(try await harness.get("/3/movie/551").status == 503)
            #expect(try await harness.get("/metrics").status == 200)  // the operator's pages are not answers counted
            // A fill's br variant is made off the event loops and stored after its answer,
            // which adds to the cache's bytes: the two pages are compared once that is done.
            #expect(try await eventually { try await harness.metrics().value("amodb_proxy_variant_queue_jobs") == 0 })

            let status = try await document(harness)
            let metrics = try await harness.metrics()
            #expect(status["version"] as? Int == 1)
            let budget = try #require(status["budget"] as? [String: Any])
            #expect(budget["limit"] as? Int == 2)
            #expect(budget["used"] as? Int == 2)
            #expect(Double(budget["used"] as? Int ?? -1) == (try metrics.value("amodb_proxy_upstream_budget_used")))
            #expect(budget["remaining"] as? Int == 0)
            #expect(budget["window_seconds"] as? Int == 60)
            #expect(budget["calls"] as? Int == 2)
            #expect(budget["misses"] as? Int == 2)
            #expect(budget["refreshes"] as? Int == 0)
            #expect((budget["refused"] as? Int ?? 0) >= 1, "\(budget)")

            let answers = try #require(status["answers"] as? [String: Any])
            #expect(answers["fresh"] as? Int == 2)
            #expect(answers["stale"] as? Int == 0)
            #expect(answers["filled"] as? Int == 2)
            #expect(answers["refused"] as? Int == 2)
            #expect(answers["hit_ratio"] as? Double == 2.0 / 6.0)
            // The minutes add up to the same answers (a test may straddle a minute).
            let minutes = try #require(status["minutes"] as? [[String: Any]])
            #expect((1...2).contains(minutes.count))
            for (field, expected) in [("fresh", 2), ("filled", 2), ("refused", 2), ("calls", 2)] {
                #expect(minutes.compactMap { $0[field] as? Int }.reduce(0, +) == expected, "\(field): \(minutes)")
            }
            #expect(minutes.allSatisfy { (($0["start"] as? Double) ?? 1).truncatingRemainder(dividingBy: 60) == 0 })

            let cache = try #require(status["cache"] as? [String: Any])
            #expect(Double(cache["entries"] as? Int ?? -1) == (try metrics.value("amodb_proxy_cache_entries")))
            #expect(Double(cache["bytes"] as? Int ?? -1) == (try metrics.value("amodb_proxy_cache_bytes")))
            #expect(cache["max_bytes"] as? Int == setup.harness.proxy.configuration.cacheMaxBytes)
            #expect(((cache["oldest_age_seconds"] as? Double) ?? -1) >= 0)

            let fleet = try #require(status["fleet"] as? [String: Any])
            #expect(fleet["redis"] as? String == "off")
            #expect(fleet["replicas"] as? Int == 1)
            #expect(status["key_set"] is NSNull, "null, not absent, without signed-in users")

            let missed = try #require(status["missed_paths"] as? [[String: Any]])
            #expect(missed.first?["path"] as? String == "/movie/551")
            #expect(missed.first?["misses"] as? Int == 2)
            #expect(
                Set(missed.compactMap { $0["path"] as? String }) == [
                    "/movie/551", "/movie/550", "/trending/movie/week",
                ])
        }
    }

    @Test func thePageRunsOnlyItsOwnScriptByAFreshNonceAndLoadsNothingFromElsewhere() async throws {
        let harness = try ProxyHarness(.live, fetcher: ScriptedUpstream())
        try await withServer(harness) { harness in
            var nonces: [String] = []
            for _ in 0..<2 {
                let response = try await harness.get("/status")
                #expect(response.status == 200)
                #expect(response.header("Content-Type") == "text/html;charset=utf-8")
                #expect(response.header("Cache-Control") == "no-store")
                let policy = try #require(response.header("Content-Security-Policy"))
                #expect(policy.hasPrefix("default-src 'none'; "))
                #expect(policy.contains("connect-src 'self'"))
                #expect(!policy.contains("unsafe-inline") && !policy.contains("unsafe-eval"))
                let nonce = try #require(
                    policy.split(separator: "'").first { $0.hasPrefix("nonce-") }.map { String($0.dropFirst(6)) })
                #expect(nonce.count == 32)
                nonces.append(nonce)
                let page = response.text
                #expect(page.components(separatedBy: "<script").count == 2, "one script")
                #expect(page.contains("<script nonce=\"\(nonce)\">"))
                #expect(page.contains("<style nonce=\"\(nonce)\">"))
                #expect(page.contains("fetch(\"status.json\""))
                // Nothing from elsewhere: no src attribute, no link, no address but SVG's namespace.
                #expect(!page.contains(" src=") && !page.contains("<link") && !page.contains("@import"))
                #expect(page.replacingOccurrences(of: "http://www.w3.org/2000/svg", with: "").range(of: "://") == nil)
            }
            #expect(nonces[0] != nonces[1])
        }
    }

    @Test func theKeySetUsersSignInWithIsListedByItsKeyIDs() async throws {
        let provider = try SignInProvider()
        var unusable = provider.keys["rsa-1"]!.publicParameters
        unusable["kid"] = "for-encryption"
        unusable["use"] = "enc"
        try await withServer(
            try UserTokenSetup(provider: provider, keySet: .keySet(provider.keySet(extra: [unusable])), secret: false)
        ) { setup throws in
            #expect(try await eventually(within: 20) { try await setup.harness.get("/readyz").status == 200 })
            let keySet = try #require(try await document(setup.harness)["key_set"] as? [String: Any])
            #expect(keySet["key_ids"] as? [String] == provider.keys.keys.sorted())
            #expect(keySet["skipped"] as? Int == 1)
            // Which key, and why, so the page need not send the operator to the logs.
            let skipped = try #require(keySet["skipped_keys"] as? [[String: Any]])
            #expect(skipped.count == 1)
            #expect(skipped.first?["kid"] as? String == "for-encryption")
            #expect(skipped.first?["index"] is Int)
            #expect((skipped.first?["reason"] as? String)?.contains("enc") == true, "\(skipped)")
            #expect(keySet["problem"] is NSNull)
        }
    }

    @Test func theOperatorsPagesGetNoCORSWhileTheAPIDoes() async throws {
        let origin = "https://app.example"
        let setup = try SandboxedProxy(adjust: { $0.corsOrigins = [origin] })
        try await withServer(setup) { setup in
            let api = try await setup.harness.get("/3/configuration", headers: ["Origin": origin])
            #expect(api.header("Access-Control-Allow-Origin") == origin)
            for path in ["/status", "/status.json", "/metrics"] {
                let response = try await setup.harness.get(path, headers: ["Origin": origin])
                #expect(response.status == 200)
                #expect(response.header("Access-Control-Allow-Origin") == nil, "\(path)")
            }
        }
    }
}
