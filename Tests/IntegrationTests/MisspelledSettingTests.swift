import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

/// A setting misspelled in the environment is named, with the one meant, never ignored in
/// silence; `--check-config` refuses what the start refuses.
@Suite(.timeLimit(.minutes(1)))
struct MisspelledSettingTests {
    @Test(arguments: [
        ("AMODB_RATELIMIT", "AMODB_RATE_LIMIT"), ("AMODB_TOKENS", "AMODB_PROXY_TOKENS"),
        ("AMODB_CACHETTL", "AMODB_CACHE_TTL"), ("AMODB_REDIS", "AMODB_REDIS_URL"),
        ("AMODB_FLEETSIZE", "AMODB_FLEET_SIZE"),
    ])
    func checkConfigNamesTheSettingMeantAndFails(misspelled: String, meant: String) async throws {
        let outcome = try await ProxyBinary().run(
            ["--check-config"], environment: ["AMODB_KEY": "a-key-for-the-check", misspelled: "a-secret-value-9"])
        #expect(outcome.status == 2)
        #expect(outcome.standardError.contains("\(misspelled) is no setting; did you mean \(meant)?"))
        #expect(
            !outcome.standardError.contains("a-secret-value-9") && !outcome.standardOutput.contains("a-secret-value-9"))
    }

    @Test func theKnownNamesPassTheCheck() async throws {
        let outcome = try await ProxyBinary().run(
            ["--check-config"],
            environment: ["AMODB_KEY": "a-key-for-the-check", "AMODB_RATE_LIMIT": "120", "AMODB_SANDBOX": "0"])
        #expect(outcome.status == 0)
        #expect(outcome.standardError.isEmpty)
    }

    @Test func aServingProxyWarnsOfAMisspelledSetting() async throws {
        let process = try ProxyBinary().launch(
            ["--sandbox"], environment: ["HOST": "127.0.0.1", "PORT": "0", "AMODB_TOKENS": "secret-token-value"],
            standardOutput: .pipe, standardError: .pipe)
        defer { process.terminate() }
        let output = try #require(process.standardOutput)
        let errors = try #require(process.standardError)
        let warning = "AMODB_TOKENS is no setting and is ignored; did you mean AMODB_PROXY_TOKENS?"
        #expect(await eventually { (output.text + errors.text).contains(warning) })
        #expect(!(output.text + errors.text).contains("secret-token-value"))
        // The hint for the person at the terminal is not in the access log.
        #expect(await eventually { errors.text.contains("Try: curl http://127.0.0.1:") })
        #expect(!output.text.contains("Try: curl"))
    }

    @Test(arguments: ["localhost", "example.com", "999.1.1.1", ""])
    func aHostThatIsNoAddressIsRefusedByTheCheckAsByTheStart(host: String) async throws {
        for arguments in [["--check-config"], []] {
            let outcome = try await ProxyBinary().run(
                arguments, environment: ["AMODB_KEY": "a-key-for-the-check", "HOST": host, "PORT": "0"])
            #expect(outcome.status == 2, "\(arguments)")
            #expect(outcome.standardError.contains("HOST must be an IP address"), "\(outcome.standardError)")
        }
    }
}
