import AmodbProxy
import AmodbSandbox
import AmodbTestSupport
import Foundation
import Testing

@Suite(.timeLimit(.minutes(1)))
struct ClientRateLimitTests {
    @Test func limitsEachTokenOnItsOwn() async throws {
        let proxy = try SandboxedProxy(clock: ManualClock()) {
            $0.clientTokens = [Secret("a"), Secret("b")]
            $0.clientRateLimit = 1  // one a minute, and the clock stands still: no refill
            $0.clientBurst = 3
        }
        try await withServer(proxy) { setup throws in
            for _ in 0..<3 {
                #expect(
                    try await setup.harness.get("/3/movie/550", headers: ["Authorization": "Bearer a"]).status == 200)
            }
            let limited = try await setup.harness.get("/3/movie/550", headers: ["Authorization": "Bearer a"])
            #expect(limited.status == 429)
            #expect(limited.header("Retry-After") == "60")
            #expect(limited.text.contains("status_message"))
            #expect(try await setup.harness.get("/3/movie/550", headers: ["Authorization": "Bearer b"]).status == 200)
        }
    }

    @Test func limitsByAddressAndIgnoresForwardedForFromUntrustedPeers() async throws {
        let proxy = try SandboxedProxy(clock: ManualClock()) {
            $0.clientRateLimit = 1  // one a minute, and the clock stands still: no refill
            $0.clientBurst = 2
            $0.rateLimitExempt = []  // the tests' only peer is loopback, exempt by default
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
            $0.clientRateLimit = 1  // one a minute, and the clock stands still: no refill
            $0.clientBurst = 2
            $0.trustedProxies = ["127.0.0.1"]
            $0.rateLimitExempt = []
        }
        try await withServer(proxy) { setup throws in
            for _ in 0..<2 {
                #expect(
                    try await setup.harness.get("/3/movie/550", headers: ["X-Forwarded-For": "198.51.100.1"]).status
                        == 200)
            }
            #expect(
                try await setup.harness.get("/3/movie/550", headers: ["X-Forwarded-For": "198.51.100.1"]).status == 429)
            #expect(
                try await setup.harness.get("/3/movie/550", headers: ["X-Forwarded-For": "198.51.100.2"]).status == 200)
            #expect(setup.accessLog.all.contains { $0.contains(#""client":"198.51.100.2""#) })
        }
    }
}
