import AmodbProxy
import AmodbSandbox
import AmodbTestSupport
import Foundation
import Testing

@Suite(.timeLimit(.minutes(1)))
struct ClientTokenTests {
    @Test func requiresAValidTokenOnEveryAPIRouteButNotOnHealth() async throws {
        try await withServer(try SandboxedProxy { $0.clientTokens = [Secret("app-token-1"), Secret("app-token-2")] }) { setup throws in
            let missing = try await setup.harness.get("/3/trending/movie/week")
            #expect(missing.status == 401)
            #expect(missing.header("WWW-Authenticate") == #"Bearer realm="amodb-proxy""#)
            #expect(missing.text.contains("status_message"))
            #expect(try await setup.harness.get("/3/movie/550", headers: ["Authorization": "Bearer wrong"]).status == 401)
            #expect(try await setup.harness.get("/3/movie/popular", headers: ["Authorization": "Bearer wrong"]).status == 401)
            #expect(setup.sandbox.totalRequestCount == 0)

            #expect(try await setup.harness.get("/3/movie/550", headers: ["Authorization": "Bearer app-token-1"]).status == 200)
            #expect(try await setup.harness.get("/3/movie/550", headers: ["Authorization": "Bearer app-token-2"]).status == 200)
            #expect(try await setup.harness.get("/healthz").status == 200)
            #expect(try await setup.harness.get("/readyz").status == 200)
            #expect(try await setup.harness.get("/metrics").status == 200)

            // Never forwarded, never logged.
            #expect(setup.sandbox.receivedRequests.allSatisfy { $0.headers.values("Authorization") == ["Bearer \(ProxyHarness.key)"] })
            let logs = setup.logLines + setup.accessLog.all
            #expect(!logs.contains { $0.contains("app-token") || $0.contains(ProxyHarness.key) })
        }
    }

    @Test func rotatesTokensFromAFileWithoutARestart() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tokens-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        try "# the app's current token\nold-token\n".write(toFile: file, atomically: true, encoding: .utf8)
        try await withServer(try SandboxedProxy { $0.clientTokensFile = file }) { setup throws in
            #expect(try await setup.harness.get("/3/movie/550", headers: ["Authorization": "Bearer old-token"]).status == 200)
            #expect(try await setup.harness.get("/3/movie/550", headers: ["Authorization": "Bearer new-token"]).status == 401)

            try "old-token\nnew-token\n".write(toFile: file, atomically: true, encoding: .utf8)   // both valid during the rotation
            #expect(await eventually(within: 6) { setup.harness.proxy.tokens.count == 2 })
            #expect(try await setup.harness.get("/3/movie/550", headers: ["Authorization": "Bearer new-token"]).status == 200)
            #expect(try await setup.harness.get("/3/movie/550", headers: ["Authorization": "Bearer old-token"]).status == 200)

            try "new-token\n".write(toFile: file, atomically: true, encoding: .utf8)
            #expect(await eventually(within: 6) { setup.harness.proxy.tokens.count == 1 })
            #expect(try await setup.harness.get("/3/movie/550", headers: ["Authorization": "Bearer old-token"]).status == 401)
            #expect(try await setup.harness.get("/3/movie/550", headers: ["Authorization": "Bearer new-token"]).status == 200)
        }
    }
}

@Suite(.timeLimit(.minutes(1)))
struct ClientRateLimitTests {
    @Test func limitsEachTokenOnItsOwn() async throws {
        let proxy = try SandboxedProxy(clock: ManualClock()) {
            $0.clientTokens = [Secret("a"), Secret("b")]
            $0.clientRateLimit = 1   // one a minute, and the clock stands still: no refill
            $0.clientBurst = 3
        }
        try await withServer(proxy) { setup throws in
            for _ in 0..<3 { #expect(try await setup.harness.get("/3/movie/550", headers: ["Authorization": "Bearer a"]).status == 200) }
            let limited = try await setup.harness.get("/3/movie/550", headers: ["Authorization": "Bearer a"])
            #expect(limited.status == 429)
            #expect(limited.header("Retry-After") == "60")
            #expect(limited.text.contains("status_message"))
            #expect(try await setup.harness.get("/3/movie/550", headers: ["Authorization": "Bearer b"]).status == 200)
        }
    }

    @Test func limitsByAddressAndIgnoresForwardedForFromUntrustedPeers() async throws {
        let proxy = try SandboxedProxy(clock: ManualClock()) {
            $0.clientRateLimit = 1   // one a minute, and the clock stands still: no refill
            $0.clientBurst = 2
            $0.rateLimitExempt = []   // the tests' only peer is loopback, exempt by default
        }
        try await withServer(proxy) { setup throws in
            // Forged X-Forwarded-For values do not buy a client new buckets.
            #expect(try await setup.harness.get("/3/movie/550", headers: ["X-Forwarded-For": "1.1.1.1"]).status == 200)
            #expect(try await setup.harness.get("/3/movie/550", headers: ["X-Forwarded-For": "2.2.2.2"]).status == 200)
            #expect(try await setup.harness.get("/3/movie/550", headers: ["X-Forwarded-For": "3.3.3.3"]).status == 429)
            #expect(setup.accessLog.all.allSatisfy { $0.contains(#""client":"127.0.0.1""#) })
        }
    }

    @Test func loopbackPeersAreExemptFromAddressLimitsByDefault() async throws {
        let proxy = try SandboxedProxy(clock: ManualClock()) {
            $0.clientRateLimit = 1
            $0.clientBurst = 1
        }
        try await withServer(proxy) { setup throws in
            for _ in 0..<5 { #expect(try await setup.harness.get("/3/movie/550").status == 200) }
        }
    }

    @Test func believesForwardedForFromATrustedProxy() async throws {
        let proxy = try SandboxedProxy(clock: ManualClock()) {
            $0.clientRateLimit = 1   // one a minute, and the clock stands still: no refill
            $0.clientBurst = 2
            $0.trustedProxies = ["127.0.0.1"]
            $0.rateLimitExempt = []
        }
        try await withServer(proxy) { setup throws in
            for _ in 0..<2 { #expect(try await setup.harness.get("/3/movie/550", headers: ["X-Forwarded-For": "198.51.100.1"]).status == 200) }
            #expect(try await setup.harness.get("/3/movie/550", headers: ["X-Forwarded-For": "198.51.100.1"]).status == 429)
            #expect(try await setup.harness.get("/3/movie/550", headers: ["X-Forwarded-For": "198.51.100.2"]).status == 200)
            #expect(setup.accessLog.all.contains { $0.contains(#""client":"198.51.100.2""#) })
        }
    }
}

@Suite(.timeLimit(.minutes(1)))
struct CORSTests {
    @Test func answersPreflightForAllowedOriginsOnly() async throws {
        try await withServer(try SandboxedProxy { $0.corsOrigins = ["https://app.example.com"] }) { setup throws in
            let preflight = try await setup.harness.get("/3/movie/550", headers: [
                "Origin": "https://app.example.com", "Access-Control-Request-Method": "GET",
                "Access-Control-Request-Headers": "authorization",
            ], method: "OPTIONS")
            #expect(preflight.status == 204)
            #expect(preflight.header("Access-Control-Allow-Origin") == "https://app.example.com")
            #expect(preflight.header("Access-Control-Allow-Methods") == "GET, HEAD")
            #expect(preflight.header("Access-Control-Allow-Headers")?.contains("Authorization") == true)
            #expect(preflight.headers.filter { $0.name.lowercased() == "vary" }.map(\.value) == ["Origin"], "one Vary, not one per layer")
            #expect(preflight.header("Access-Control-Allow-Credentials") == nil)

            let other = try await setup.harness.get("/3/movie/550", headers: ["Origin": "https://evil.example", "Access-Control-Request-Method": "GET"], method: "OPTIONS")
            #expect(other.status == 403)
            #expect(other.header("Access-Control-Allow-Origin") == nil)

            let actual = try await setup.harness.get("/3/movie/550", headers: ["Origin": "https://app.example.com"])
            #expect(actual.status == 200)
            #expect(actual.header("Access-Control-Allow-Origin") == "https://app.example.com")
            #expect(actual.header("Access-Control-Expose-Headers")?.contains("Cache-Status") == true)
            // Cacheable answers vary on Accept-Encoding too: CORS adds Origin.
            #expect(actual.headers.filter { $0.name.lowercased() == "vary" }.map(\.value) == ["Accept-Encoding", "Origin"])
            let foreign = try await setup.harness.get("/3/movie/550", headers: ["Origin": "https://evil.example"])
            #expect(foreign.header("Access-Control-Allow-Origin") == nil)
            #expect(setup.sandbox.totalRequestCount == 1)
        }
    }

    @Test func aWildcardNeverComesWithCredentials() async throws {
        try await withServer(try SandboxedProxy { $0.corsOrigins = ["*"] }) { setup throws in
            let actual = try await setup.harness.get("/3/movie/550", headers: ["Origin": "https://anyone.example"])
            #expect(actual.header("Access-Control-Allow-Origin") == "*")
            #expect(actual.header("Access-Control-Allow-Credentials") == nil)
            let preflight = try await setup.harness.get("/3/movie/550", headers: ["Origin": "https://anyone.example", "Access-Control-Request-Method": "GET"], method: "OPTIONS")
            #expect(preflight.status == 204)
            #expect(preflight.header("Access-Control-Allow-Origin") == "*")
            #expect(preflight.header("Access-Control-Allow-Credentials") == nil)
        }
    }

    @Test func withoutTheSettingOptionsIsStill405() async throws {
        try await withServer(try SandboxedProxy()) { setup throws in
            let response = try await setup.harness.get("/3/movie/550", headers: ["Origin": "https://app.example.com", "Access-Control-Request-Method": "GET"], method: "OPTIONS")
            #expect(response.status == 405)
            #expect(response.header("Access-Control-Allow-Origin") == nil)
            let actual = try await setup.harness.get("/3/movie/550", headers: ["Origin": "https://app.example.com"])
            #expect(actual.header("Access-Control-Allow-Origin") == nil)
        }
    }
}
