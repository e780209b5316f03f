import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

/// The per-client rate limit and share of the calls for misses follow the user, not the
/// app token every user of an app sends: the key is the token and the client's address
/// (here from a trusted `X-Forwarded-For`, as behind a TLS terminator), the token alone
/// from an exempt address, and a token's own name, not its place in the list.
@Suite(.timeLimit(.minutes(1)))
struct PerUserLimitTests {
    static let token = "app-token-5c0f9e2b7d41a8"
    static let userA = "198.51.100.1"
    static let userB = "198.51.100.2"

    private func headers(_ token: String = token, from address: String) -> [String: String] {
        ["Authorization": "Bearer \(token)", "X-Forwarded-For": address]
    }

    @Test func madeUpIdsFromOneUserLeaveAnotherUserOfTheSameTokenTheirShare() async throws {
        // AMODB_RATE_LIMIT 40, a share of an eighth: 5 calls for misses per user per minute.
        let proxy = try SandboxedProxy {
            $0.clientTokens = [Secret(Self.token)]
            $0.trustedProxies = ["127.0.0.1"]
        }
        try await withServer(proxy) { setup throws in
            for id in 990_001...990_005 {
                #expect(try await setup.harness.get("/3/movie/\(id)", headers: headers(from: Self.userA)).status == 404)
            }
            let spent = try await setup.harness.get("/3/movie/990006", headers: headers(from: Self.userA))
            #expect(spent.status == 503, "A has used its share")
            #expect(spent.text.contains("used its share"))
            #expect(spent.text.contains("AMODB_CLIENT_SHARE"), "the 503 names the setting that raises the share")
            #expect(!spent.text.contains("AMODB_SEARCH_SHARE"), "a movie is not a search")

            let other = try await setup.harness.get("/3/movie/550", headers: headers(from: Self.userB))
            #expect(other.status == 200, "B, with the same app token, still has its own share")
            #expect(other.text.contains(#""id":550"#))
            #expect(setup.sandbox.totalRequestCount == 6)
        }
    }

    @Test func oneUserFloodingLeavesAnotherUserOfTheSameTokenTheirRate() async throws {
        let proxy = try SandboxedProxy(clock: ManualClock()) {
            $0.clientTokens = [Secret(Self.token)]
            $0.trustedProxies = ["127.0.0.1"]
            $0.clientRateLimit = 1  // one a minute, and the clock stands still: no refill
            $0.clientBurst = 3
        }
        try await withServer(proxy) { setup throws in
            for _ in 0..<3 {
                #expect(try await setup.harness.get("/3/movie/550", headers: headers(from: Self.userA)).status == 200)
            }
            #expect(try await setup.harness.get("/3/movie/550", headers: headers(from: Self.userA)).status == 429)
            #expect(try await setup.harness.get("/3/movie/550", headers: headers(from: Self.userB)).status == 200)
        }
    }

    @Test func fromAnExemptAddressTheTokenAloneIsTheKey() async throws {
        // A sidecar at 10.0.0.5 speaks for many users: what it says of them is not believed
        // (it is not a trusted proxy), so they cannot buy buckets with forged addresses, and
        // every exempt address shares the token's one bucket.
        let proxy = try SandboxedProxy(clock: ManualClock()) {
            $0.clientTokens = [Secret(Self.token)]
            $0.trustedProxies = ["127.0.0.1"]
            $0.rateLimitExempt = ["10.0.0.0/8"]
            $0.clientRateLimit = 1
            $0.clientBurst = 2
        }
        try await withServer(proxy) { setup throws in
            #expect(
                try await setup.harness.get("/3/movie/550", headers: headers(from: "203.0.113.1, 10.0.0.5")).status
                    == 200)
            #expect(
                try await setup.harness.get("/3/movie/550", headers: headers(from: "203.0.113.2, 10.0.0.5")).status
                    == 200)
            #expect(
                try await setup.harness.get("/3/movie/550", headers: headers(from: "203.0.113.3, 10.0.0.5")).status
                    == 429)
            #expect(
                try await setup.harness.get("/3/movie/550", headers: headers(from: "10.0.0.6")).status == 429,
                "another exempt address, the same key")
            // A user at an address of its own is keyed by the token and that address.
            #expect(try await setup.harness.get("/3/movie/550", headers: headers(from: Self.userA)).status == 200)
            #expect(setup.accessLog.all.filter { $0.contains(#""client":"10.0.0.5""#) }.count == 3)
        }
    }

    @Test func aRotationHandsNoTokensBucketToAnother() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tokens-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        try "old-token-3f9a1c\nnew-token-8b2e4d\n".write(toFile: file, atomically: true, encoding: .utf8)
        let proxy = try SandboxedProxy(clock: ManualClock()) {
            $0.clientTokensFile = file
            $0.clientRateLimit = 1  // one a minute, and the clock stands still: no refill
            $0.clientBurst = 2
        }
        try await withServer(proxy) { setup throws in
            let old = ["Authorization": "Bearer old-token-3f9a1c"]
            let new = ["Authorization": "Bearer new-token-8b2e4d"]
            for _ in 0..<2 { #expect(try await setup.harness.get("/3/movie/550", headers: old).status == 200) }
            #expect(
                try await setup.harness.get("/3/movie/550", headers: old).status == 429,
                "the old token's bucket is drained")
            #expect(try await setup.harness.get("/3/movie/550", headers: new).status == 200)

            try "new-token-8b2e4d\n".write(toFile: file, atomically: true, encoding: .utf8)  // the old token removed
            #expect(await eventually(within: 30) { setup.harness.proxy.tokens.count == 1 })
            #expect(try await setup.harness.get("/3/movie/550", headers: old).status == 401)
            // The new token, now first in the list, keeps its own bucket: one request left of two.
            #expect(try await setup.harness.get("/3/movie/550", headers: new).status == 200)
            #expect(try await setup.harness.get("/3/movie/550", headers: new).status == 429)
        }
    }
}
