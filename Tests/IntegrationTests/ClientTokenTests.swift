import AmodbProxy
import AmodbSandbox
import AmodbTestSupport
import Foundation
import Testing

@Suite(.timeLimit(.minutes(1)))
struct ClientTokenTests {
    @Test func requiresAValidTokenOnEveryAPIRouteButNotOnHealth() async throws {
        try await withServer(try SandboxedProxy { $0.clientTokens = [Secret("app-token-1"), Secret("app-token-2")] }) {
            setup throws in
            let missing = try await setup.harness.get("/3/trending/movie/week")
            #expect(missing.status == 401)
            #expect(missing.header("WWW-Authenticate") == #"Bearer realm="amodb-proxy""#)
            #expect(missing.text.contains("status_message"))
            #expect(
                try await setup.harness.get("/3/movie/550", headers: ["Authorization": "Bearer wrong"]).status == 401)
            #expect(
                try await setup.harness.get("/3/movie/popular", headers: ["Authorization": "Bearer wrong"]).status
                    == 401)
            #expect(setup.sandbox.totalRequestCount == 0)

            #expect(
                try await setup.harness.get("/3/movie/550", headers: ["Authorization": "Bearer app-token-1"]).status
                    == 200)
            #expect(
                try await setup.harness.get("/3/movie/550", headers: ["Authorization": "Bearer app-token-2"]).status
                    == 200)
            #expect(try await setup.harness.get("/healthz").status == 200)
            #expect(try await setup.harness.get("/readyz").status == 200)
            #expect(try await setup.harness.get("/metrics").status == 200)

            // Never forwarded, never logged.
            #expect(
                setup.sandbox.receivedRequests.allSatisfy {
                    $0.headers.values("Authorization") == ["Bearer \(ProxyHarness.key)"]
                })
            let logs = setup.logLines + setup.accessLog.all
            #expect(!logs.contains { $0.contains("app-token") || $0.contains(ProxyHarness.key) })
        }
    }

    @Test func rotatesTokensFromAFileWithoutARestart() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tokens-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        try "# the app's current token\nold-token\n".write(toFile: file, atomically: true, encoding: .utf8)
        try await withServer(try SandboxedProxy { $0.clientTokensFile = file }) { setup throws in
            #expect(
                try await setup.harness.get("/3/movie/550", headers: ["Authorization": "Bearer old-token"]).status
                    == 200)
            #expect(
                try await setup.harness.get("/3/movie/550", headers: ["Authorization": "Bearer new-token"]).status
                    == 401)

            // both valid during the rotation
            try "old-token\nnew-token\n".write(toFile: file, atomically: true, encoding: .utf8)
            #expect(await eventually(within: 30) { setup.harness.proxy.tokens.count == 2 })
            #expect(
                try await setup.harness.get("/3/movie/550", headers: ["Authorization": "Bearer new-token"]).status
                    == 200)
            #expect(
                try await setup.harness.get("/3/movie/550", headers: ["Authorization": "Bearer old-token"]).status
                    == 200)

            try "new-token\n".write(toFile: file, atomically: true, encoding: .utf8)
            #expect(await eventually(within: 30) { setup.harness.proxy.tokens.count == 1 })
            #expect(
                try await setup.harness.get("/3/movie/550", headers: ["Authorization": "Bearer old-token"]).status
                    == 401)
            #expect(
                try await setup.harness.get("/3/movie/550", headers: ["Authorization": "Bearer new-token"]).status
                    == 200)
        }
    }
}
