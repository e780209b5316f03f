import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

/// `--help`, `--version`, `--check-config` and `--healthcheck`, run as the built binary.
@Suite(.timeLimit(.minutes(1)))
struct CommandLineTests {
    @Test func helpPrintsTheUsageInEightyColumnsAndExitsZero() async throws {
        let outcome = try await ProxyBinary().run(["--help"])
        #expect(outcome.status == 0)
        #expect(outcome.standardOutput == ConfigurationLoader.usage)
        for line in outcome.standardOutput.split(separator: "\n") {
            #expect(line.count <= 80, "\(line)")
        }
        #expect(outcome.standardOutput.contains("--snapshot-interval VALUE"))
    }

    @Test func versionPrintsTheVersionAndExitsZero() async throws {
        let outcome = try await ProxyBinary().run(["--version"])
        #expect(outcome.status == 0)
        #expect(outcome.standardOutput == "amodb-proxy \(ConfigurationLoader.version)\n")
    }

    @Test func checkConfigPrintsTheSettingsWithEverySecretRedacted() async throws {
        let key = "binary-test-secret-key-42"
        let outcome = try await ProxyBinary().run(
            ["--check-config", "--port", "9123"],
            environment: [
                "AMODB_KEY": key, "AMODB_PROXY_TOKENS": "token-one-secret,token-two-secret", "AMODB_CACHE_TTL": "600",
            ])
        #expect(outcome.status == 0)
        let lines = outcome.standardOutput.split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(lines.contains("AMODB_KEY=<redacted>"))
        #expect(lines.contains("AMODB_PROXY_TOKENS=<2 redacted>"))
        #expect(lines.contains("AMODB_CACHE_TTL=600"), "the environment is applied")
        #expect(lines.contains("PORT=9123"), "flags are applied")
        for secret in [key, "token-one-secret", "token-two-secret"] {
            #expect(!outcome.standardOutput.contains(secret))
            #expect(!outcome.standardError.contains(secret))
        }
    }

    @Test func aBadSettingExitsTwoNamingIt() async throws {
        let outcome = try await ProxyBinary().run(
            ["--check-config"], environment: ["AMODB_KEY": "k", "AMODB_CACHE_TTL": "soon"])
        #expect(outcome.status == 2)
        #expect(outcome.standardError.contains("AMODB_CACHE_TTL"))
    }

    /// A `config/amodb-proxy.conf` left in the directory the proxy starts in, naming another
    /// upstream, is not read: the binary stops before anything is sent, naming the file and
    /// the setting, with neither the key nor the file's URL in what it says.
    @Test func aSettingsFileNobodyNamedCannotSendTheKeyElsewhere() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("amodb-cwd-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("config"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("AMODB_UPSTREAM_URL=https://collector.example/3\n".utf8).write(
            to: directory.appendingPathComponent("config/amodb-proxy.conf"))
        let key = "binary-test-secret-key-77"
        let outcome = try await ProxyBinary().run(
            ["--check-config"], environment: ["AMODB_KEY": key], in: directory.path)
        #expect(outcome.status == 2)
        #expect(outcome.standardError.contains("config/amodb-proxy.conf"), "\(outcome.standardError)")
        #expect(outcome.standardError.contains("AMODB_UPSTREAM_URL"))
        for text in [outcome.standardOutput, outcome.standardError] {
            #expect(!text.contains(key))
            #expect(!text.contains("collector.example"))
        }
    }

    @Test func healthcheckExitsZeroWhenTheProxyAnswersAndOneWhenNothingListens() async throws {
        let harness = try ProxyHarness(.live, fetcher: ScriptedUpstream())
        try await withServer(harness) { harness in
            let healthy = try await ProxyBinary().run(
                ["--healthcheck"], environment: ["HOST": "127.0.0.1", "PORT": String(harness.port)])
            #expect(healthy.status == 0)
        }
        // Port 1 on loopback: nothing listens.
        let unhealthy = try await ProxyBinary().run(["--healthcheck"], environment: ["HOST": "127.0.0.1", "PORT": "1"])
        #expect(unhealthy.status == 1)
    }
}
