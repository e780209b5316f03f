import AmodbProxy
import AmodbSandbox
import AmodbTestSupport
import Foundation
import Testing

@Suite(.timeLimit(.minutes(1)))
struct AccessLogTests {
    @Test func writesOneJSONLinePerRequestWithoutSecrets() async throws {
        let setup = try SandboxedProxy { $0.clientTokens = [Secret("client-secret-token")] }
        try await withServer(setup) { setup in
            _ = try await setup.harness.get(
                "/3/movie/550?api_key=\(ProxyHarness.key)&language=de-DE",
                headers: ["Authorization": "Bearer client-secret-token"])
            _ = try await setup.harness.get(
                "/3/movie/550?language=de-DE", headers: ["Authorization": "Bearer client-secret-token"])
            // someone tries the key as a token
            _ = try await setup.harness.get("/3/movie/550", headers: ["Authorization": "Bearer \(ProxyHarness.key)"])
            #expect(await eventually { setup.accessLog.all.count == 3 })

            let lines = setup.accessLog.all
            let objects = try lines.map {
                try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
            }
            #expect(objects.map { $0["status"] as? Int } == [200, 200, 401])
            #expect(objects.map { $0["cache"] as? String } == ["miss", "hit", "none"])
            #expect(
                objects.allSatisfy {
                    $0["route"] as? String == "/3/movie/{movie_id}" && $0["method"] as? String == "GET"
                })
            #expect(objects.allSatisfy { $0["client"] as? String == "127.0.0.1" })
            #expect(objects.allSatisfy { $0["duration_ms"] is Double || $0["duration_ms"] is Int })
            #expect((objects[0]["bytes"] as? Int ?? 0) > 100)
            #expect(objects.allSatisfy { ($0["time"] as? String)?.hasSuffix("Z") == true })
            for line in lines + setup.logLines {
                #expect(!line.contains(ProxyHarness.key))
                #expect(!line.contains("client-secret-token"))
                #expect(!line.contains("api_key"))
            }
        }
    }

    @Test func canWriteText() async throws {
        let setup = try SandboxedProxy { $0.logFormat = .text }
        try await withServer(setup) { setup in
            _ = try await setup.harness.get("/3/trending/tv/day")
            #expect(await eventually { setup.accessLog.all.count == 1 })
            let line = try #require(setup.accessLog.all.first)
            #expect(
                line.contains(
                    " method=GET route=/3/trending/{media_type}/{time_window} key=/trending/tv/day status=200 cache=miss "
                ))
            #expect(line.contains(" client=127.0.0.1"))
        }
    }

    @Test func checkConfigRedactsSecrets() throws {
        var configuration = ProxyHarness.configuration()
        configuration.clientTokens = [Secret("tok-1"), Secret("tok-2")]
        configuration.corsOrigins = ["https://app.example.com"]
        let text = ConfigurationLoader.describe(configuration)
        #expect(text.contains("AMODB_KEY=<redacted>"))
        #expect(text.contains("AMODB_PROXY_TOKENS=<2 redacted>"))
        #expect(text.contains("AMODB_CORS_ORIGINS=https://app.example.com"))
        #expect(text.contains("PORT=0"))
        #expect(!text.contains(ProxyHarness.key))
        #expect(!text.contains("tok-1"))
        // What it prints is itself a valid settings file.
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("check-\(UUID().uuidString).conf").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try text.replacingOccurrences(of: "AMODB_KEY=<redacted>", with: "AMODB_KEY=k")
            .replacingOccurrences(of: "AMODB_PROXY_TOKENS=<2 redacted>", with: "AMODB_PROXY_TOKENS=a,b")
            .write(toFile: path, atomically: true, encoding: .utf8)
        guard case .serve(let reloaded) = try ConfigurationLoader.load(arguments: ["--config", path], environment: [:])
        else {
            Issue.record("not a serve command")
            return
        }
        #expect(reloaded.corsOrigins == configuration.corsOrigins)
        #expect(reloaded.port == 0)
    }
}
