import AmodbProxy
import AmodbSandbox
import AmodbTestSupport
import Foundation
import Testing

@Suite(.timeLimit(.minutes(1)))
struct CORSTests {
    @Test func answersPreflightForAllowedOriginsOnly() async throws {
        try await withServer(try SandboxedProxy { $0.corsOrigins = ["https://app.example.com"] }) { setup throws in
            let preflight = try await setup.harness.get(
                "/3/movie/550",
                headers: [
                    "Origin": "https://app.example.com", "Access-Control-Request-Method": "GET",
                    "Access-Control-Request-Headers": "authorization",
                ], method: "OPTIONS")
            #expect(preflight.status == 204)
            #expect(preflight.header("Access-Control-Allow-Origin") == "https://app.example.com")
            #expect(preflight.header("Access-Control-Allow-Methods") == "GET, HEAD")
            #expect(preflight.header("Access-Control-Allow-Headers") == "authorization")
            #expect(
                preflight.headers.filter { $0.name.lowercased() == "vary" }.map(\.value) == [
                    "Origin, Access-Control-Request-Method, Access-Control-Request-Headers"
                ],
                "one Vary, not one per layer")
            #expect(preflight.header("Access-Control-Allow-Credentials") == nil)

            let other = try await setup.harness.get(
                "/3/movie/550", headers: ["Origin": "https://evil.example", "Access-Control-Request-Method": "GET"],
                method: "OPTIONS")
            #expect(other.status == 403)
            #expect(other.header("Access-Control-Allow-Origin") == nil)

            let actual = try await setup.harness.get("/3/movie/550", headers: ["Origin": "https://app.example.com"])
            #expect(actual.status == 200)
            #expect(actual.header("Access-Control-Allow-Origin") == "https://app.example.com")
            #expect(actual.header("Access-Control-Expose-Headers")?.contains("Cache-Status") == true)
            // Cacheable answers vary on Accept-Encoding too: CORS adds Origin.
            #expect(
                actual.headers.filter { $0.name.lowercased() == "vary" }.map(\.value) == ["Accept-Encoding", "Origin"])
            let foreign = try await setup.harness.get("/3/movie/550", headers: ["Origin": "https://evil.example"])
            #expect(foreign.status == 403)
            #expect(foreign.text.contains("https://evil.example"))
            #expect(setup.sandbox.totalRequestCount == 1)
        }
    }

    @Test func aWildcardNeverComesWithCredentials() async throws {
        try await withServer(try SandboxedProxy { $0.corsOrigins = ["*"] }) { setup throws in
            let actual = try await setup.harness.get("/3/movie/550", headers: ["Origin": "https://anyone.example"])
            #expect(actual.header("Access-Control-Allow-Origin") == "*")
            #expect(actual.header("Access-Control-Allow-Credentials") == nil)
            let preflight = try await setup.harness.get(
                "/3/movie/550", headers: ["Origin": "https://anyone.example", "Access-Control-Request-Method": "GET"],
                method: "OPTIONS")
            #expect(preflight.status == 204)
            #expect(preflight.header("Access-Control-Allow-Origin") == "*")
            #expect(preflight.header("Access-Control-Allow-Credentials") == nil)
        }
    }

    @Test func withoutTheSettingOptionsIsStill405() async throws {
        try await withServer(try SandboxedProxy()) { setup throws in
            let response = try await setup.harness.get(
                "/3/movie/550", headers: ["Origin": "https://app.example.com", "Access-Control-Request-Method": "GET"],
                method: "OPTIONS")
            #expect(response.status == 405)
            #expect(response.header("Access-Control-Allow-Origin") == nil)
            let actual = try await setup.harness.get("/3/movie/550", headers: ["Origin": "https://app.example.com"])
            #expect(actual.header("Access-Control-Allow-Origin") == nil)
        }
    }
}
