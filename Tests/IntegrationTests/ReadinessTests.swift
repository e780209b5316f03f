import AmodbProxy
import AmodbSandbox
import AmodbTestSupport
import Foundation
import Testing

@Suite(.timeLimit(.minutes(1)))
struct ReadinessTests {
    @Test func flipsWhenAmodbRejectsTheKeyAndBackWhenItAccepts() async throws {
        let fetcher = ScriptedUpstream()
        fetcher.enqueue(.response(UpstreamResponse(status: 401, body: Array(#"{"status_message":"no"}"#.utf8))))
        let harness = try ProxyHarness(.live, fetcher: fetcher)
        try await withServer(harness) { harness in
            #expect(try await harness.get("/readyz").status == 200, "ready before any call")
            #expect(try await harness.get("/3/trending/movie/week").status == 502)
            let rejected = try await harness.get("/readyz")
            #expect(rejected.status == 503)
            // amodb's error shape, as every refusal, with the probe's `status` beside it.
            let body = try #require(
                try JSONSerialization.jsonObject(with: Data(rejected.body)) as? [String: Any], "\(rejected.text)")
            #expect(body["status_code"] as? Int == 503)
            #expect((body["status_message"] as? String)?.contains("amodb rejects the proxy's key") == true)
            #expect(body["success"] as? Bool == false)
            #expect((body["status"] as? String)?.contains("key") == true)
            #expect(rejected.header("Cache-Control") == "no-store")
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
