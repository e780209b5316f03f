import AmodbCrypto
import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

/// Refusals count against the client's address: once it has spent its rate (the per-client
/// burst, then `AMODB_CLIENT_RATE_LIMIT`) on refused tokens, it gets 429 before any
/// signature is checked, like any other flood. A user whose token verified before is a
/// lookup, and is not held up by a flood from the same address.
@Suite(.timeLimit(.minutes(1)))
struct RefusalThrottleTests {
    static let burst = 10

    static func limited(_ configuration: inout ProxyConfiguration) {
        configuration.rateLimitExempt = []
        // A request a minute after the burst: none comes back while a test runs.
        configuration.clientRateLimit = 1
        configuration.clientBurst = burst
    }

    @Test func aFloodOfBadTokensGets429BeforeAnySignatureIsChecked() async throws {
        try await withServer(try UserTokenSetup(adjust: Self.limited)) { setup throws in
            #expect(try await awaitKeySet(setup))
            let good = try setup.token("user-good", kid: "ec-1")
            #expect(try await setup.get(token: good).status == 200)

            var statuses: [Int] = []
            for index in 0..<40 {
                var token = Array(try setup.token("user-\(index)", kid: "ec-1"))
                let position = token.count - 20
                token[position] = token[position] == "A" ? "B" : "A"
                let response = try await setup.get(token: String(token))
                statuses.append(response.status)
                if response.status == 429 { #expect(response.header("Retry-After") != nil) }
            }
            #expect(statuses == Array(repeating: 401, count: Self.burst) + Array(repeating: 429, count: 30))
            let metrics = try await setup.harness.metrics()
            #expect(try metrics.value("amodb_proxy_auth_total", ["result": "bad_signature"]) == Double(Self.burst))
            #expect(try metrics.value("amodb_proxy_auth_total", ["result": "throttled"]) == 30)

            #expect(try await setup.get(token: good).status == 200, "a remembered token is a lookup")
            let newcomer = try await setup.get(token: try setup.token("user-new", kid: "ec-1"))
            #expect(newcomer.status == 429, "a token to verify waits until the address's rate allows")
            #expect(setup.proxy.sandbox.totalRequestCount == 1)
        }
    }

    @Test func aFloodOfWrongAppTokensOrNoneGets429Too() async throws {
        try await withServer(
            try SandboxedProxy { configuration in
                configuration.clientTokens = [Secret("app-token")]
                Self.limited(&configuration)
            }
        ) { setup throws in
            var statuses: [Int] = []
            for index in 0..<15 {
                let headers = index.isMultiple(of: 2) ? ["Authorization": "Bearer wrong-\(index)"] : [:]
                statuses.append(try await setup.harness.get("/3/movie/550", headers: headers).status)
            }
            #expect(statuses == Array(repeating: 401, count: Self.burst) + Array(repeating: 429, count: 5))
            #expect(
                try await setup.harness.get("/3/movie/550", headers: ["Authorization": "Bearer app-token"]).status
                    == 200)
        }
    }

    @Test func anExemptAddressIsNotThrottled() async throws {
        try await withServer(
            try UserTokenSetup { configuration in
                Self.limited(&configuration)
                configuration.rateLimitExempt = ["127.0.0.0/8"]
            }
        ) { setup throws in
            for _ in 0..<(Self.burst + 5) {
                #expect(try await setup.get(token: "not-a-token").status == 401)
            }
        }
    }
}
