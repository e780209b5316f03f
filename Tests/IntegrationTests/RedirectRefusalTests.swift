import AmodbProxy
import AmodbSandbox
import AmodbTestSupport
import Testing

/// The real URLSession fetcher never follows a redirect: a redirect would carry the key's
/// `Authorization` header to whatever host `Location` names.
@Suite(.timeLimit(.minutes(1)))
struct RedirectRefusalTests {
    @Test(
        "A redirect from amodb is a gateway error and the host it names is never contacted",
        arguments: [301, 302, 303, 307, 308])
    func aRedirectIsNeverFollowed(status: Int) async throws {
        // The lure: a second listener that would accept the key and answer 200.
        let elsewhere = AmodbSandbox(configuration: .init(apiKey: ProxyHarness.key, requestsPerMinute: 120))
        _ = try elsewhere.start()
        try await withServer(elsewhere) { elsewhere in
            // The proxy uses its real fetcher (no scripted upstream) against a redirecting stand-in.
            let setup = try SandboxedProxy()
            try await withServer(setup) { setup in
                setup.sandbox.script(
                    "/3/movie/550", .redirect(status: status, location: elsewhere.baseURL + "/movie/550"))

                let response = try await setup.harness.get("/3/movie/550")
                #expect(response.status == 502)
                #expect(response.header("Cache-Status") == "amodb-proxy; fwd=miss; fwd-status=\(status)")
                #expect(!response.text.contains(ProxyHarness.key))
                #expect(setup.sandbox.requestCount(path: "/3/movie/550") == 1)
                #expect(elsewhere.totalRequestCount == 0, "the redirect was followed")
            }
        }
    }
}
