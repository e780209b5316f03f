import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

/// With `AMODB_OPERATOR_PORT` the operator's pages (`/metrics`, `/status`, `/status.json`)
/// and `/readyz`'s details are on a listener of their own (loopback by default); the public
/// port answers those pages 404, as any path it does not serve, and serves the API only.
@Suite(.timeLimit(.minutes(1)))
struct OperatorPortTests {
    @Test func theOperatorsPagesMoveToTheirOwnPortAndThePublicOneAnswersThem404() async throws {
        let setup = try SandboxedProxy { $0.operatorPort = 0 }
        try await withServer(setup) { setup in
            let harness = setup.harness
            let operatorPort = try #require(harness.proxy.operatorPort)
            #expect(operatorPort != harness.port)
            for page in ["/metrics", "/status", "/status.json"] {
                let hidden = try await harness.get(page)
                #expect(hidden.status == 404, "\(page) on the public port")
                #expect(hidden.text.contains("status_message"))
                let shown = try await harness.get(page, atPort: operatorPort)
                #expect(shown.status == 200 || (page == "/status.json" && shown.status == 503), "\(page)")
            }
            #expect(try await harness.get("/3/movie/550").status == 200)
            for api in ["/3/movie/550", "/3/trending/movie/day", "/attest/challenge"] {
                #expect(try await harness.get(api, atPort: operatorPort).status == 404, "no API on the operator's port")
            }
            for probe in ["/healthz", "/readyz"] {
                #expect(try await harness.get(probe).status == 200, "\(probe): the platform's probes stay public")
                #expect(try await harness.get(probe, atPort: operatorPort).status == 200)
            }
            let metrics = try await harness.get("/metrics", atPort: operatorPort).text
            #expect(metrics.contains("amodb_proxy_requests_total"))
        }
    }

    @Test func anAddressIsLimitedOnTheOperatorsPagesWhicheverPortServesThem() async throws {
        for ownPort in [false, true] {
            // A clock that stands still: no token comes back however slowly the machine runs.
            let setup = try SandboxedProxy(clock: ManualClock()) {
                $0.operatorPort = ownPort ? 0 : nil
                $0.rateLimitExempt = []
            }
            try await withServer(setup) { setup in
                let harness = setup.harness
                let port = ownPort ? harness.proxy.operatorPort : nil
                var statuses: [Int: Int] = [:]
                for _ in 0..<70 {
                    statuses[try await harness.get("/status.json", atPort: port).status, default: 0] += 1
                }
                #expect(statuses[429] == 10, "60 at once, then 429: \(statuses)")
                let refused = try await harness.get("/metrics", atPort: port)
                #expect(refused.status == 429)
                #expect(refused.header("Retry-After") != nil)
                #expect(try await harness.get("/healthz", atPort: port).status == 200, "probes are not limited")
            }
        }
    }

    @Test func theOperatorsPortMustDifferFromThePublicOne() throws {
        var configuration = ProxyHarness.configuration()
        configuration.port = 8080
        configuration.operatorPort = 8080
        #expect(throws: ConfigurationError.self) { try configuration.validated() }
    }
}
