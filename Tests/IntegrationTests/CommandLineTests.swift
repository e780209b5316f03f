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
