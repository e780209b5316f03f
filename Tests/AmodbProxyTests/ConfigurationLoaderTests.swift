@testable import AmodbProxy
import Foundation
import Testing

struct ConfigurationLoaderTests {
    private func serve(_ arguments: [String], _ environment: [String: String]) throws -> ProxyConfiguration {
        guard case .serve(let configuration) = try ConfigurationLoader.load(arguments: arguments, environment: environment) else {
            throw ConfigurationError("not a serve command")
        }
        return configuration
    }

    private func temporaryFile(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("amodb-\(UUID().uuidString)").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func withoutAKeyItRefusesToStartAndNamesAMODB_KEY() {
        #expect {
            _ = try ConfigurationLoader.load(arguments: [], environment: ["AMODB_CONFIG": "/dev/null"])
        } throws: { error in
            (error as? ConfigurationError)?.description.contains("AMODB_KEY") == true
                && !(error as! ConfigurationError).description.contains("\n")
        }
    }

    @Test func sandboxModeNeedsNoKey() throws {
        let configuration = try serve(["--sandbox"], ["AMODB_CONFIG": "/dev/null"])
        #expect(configuration.sandbox)
    }

    @Test func flagsBeatTheEnvironmentWhichBeatsTheFileWhichBeatsDefaults() throws {
        let file = try temporaryFile("PORT=7000\nAMODB_CACHE_TTL=60\nHOST=10.0.0.1\nAMODB_KEY=from-file\n")
        let configuration = try serve(
            ["--config", file, "--port", "9000"],
            ["PORT": "8000", "AMODB_CACHE_TTL": "120"])
        #expect(configuration.port == 9000)
        #expect(configuration.cacheTTL == 120)
        #expect(configuration.host == "10.0.0.1")
        #expect(configuration.upstreamURL == "https://api.amodb.dev/3")
        #expect(configuration.apiKey == Secret("from-file"))
    }

    @Test func readsTheKeyFromAFileWithoutItsNewline() throws {
        let file = try temporaryFile("secret-from-file\n")
        let configuration = try serve([], ["AMODB_KEY_FILE": file, "AMODB_CONFIG": "/dev/null"])
        #expect(configuration.apiKey == Secret("secret-from-file"))
        #expect("\(configuration.apiKey)" == "<redacted>")
        var dumped = ""
        dump(configuration, to: &dumped)
        #expect(!dumped.contains("secret-from-file"))
    }

    @Test func theShippedExampleFileParsesToTheDefaults() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../config/amodb-proxy.conf").path
        let configuration = try serve(["--config", path], ["AMODB_KEY": "k"])
        let defaults = ProxyConfiguration()
        #expect(configuration.port == defaults.port)
        #expect(configuration.cacheTTL == defaults.cacheTTL)
        #expect(configuration.limits == defaults.limits)
        #expect(configuration.timeouts == defaults.timeouts)
    }

    @Test(arguments: [
        (["--port", "70000"], "PORT"),
        (["--port", "abc"], "PORT"),
        (["--cache-ttl", "-5"], "AMODB_CACHE_TTL"),
        (["--upstream-url", "ftp://x/3"], "AMODB_UPSTREAM_URL"),
        (["--log-level", "loud"], "AMODB_LOG_LEVEL"),
        (["--bogus"], "unknown option"),
        (["--port"], "needs a value"),
        (["--read-buffer-bytes", "4096"], "AMODB_READ_BUFFER_BYTES"),
    ])
    func badValuesAreOneLineErrorsNamingTheSetting(_ arguments: [String], _ named: String) {
        #expect {
            _ = try ConfigurationLoader.load(arguments: arguments, environment: ["AMODB_KEY": "k", "AMODB_CONFIG": "/dev/null"])
        } throws: { error in
            (error as? ConfigurationError)?.description.contains(named) == true
        }
    }

    @Test func anExplicitConfigFileMustExist() {
        #expect(throws: ConfigurationError.self) {
            _ = try ConfigurationLoader.load(arguments: ["--config", "/nonexistent/file"], environment: ["AMODB_KEY": "k"])
        }
    }

    @Test func helpListsEverySetting() throws {
        guard case .help = try ConfigurationLoader.load(arguments: ["--help"], environment: [:]) else {
            Issue.record("not help")
            return
        }
        for setting in ConfigurationLoader.settings {
            #expect(ConfigurationLoader.usage.contains(setting.variable))
        }
    }

    @Test func flagsAcceptNameEqualsValue() throws {
        let configuration = try serve(["--port=1234", "--idle-timeout=5"], ["AMODB_KEY": "k", "AMODB_CONFIG": "/dev/null"])
        #expect(configuration.port == 1234)
        #expect(configuration.timeouts.idleSeconds == 5)
    }

    @Test func aKeyPastedIntoTheWrongSettingIsNotEchoed() {
        #expect {
            _ = try ConfigurationLoader.load(arguments: ["--port", "sk-live-1234"], environment: ["AMODB_KEY": "sk-live-1234", "AMODB_CONFIG": "/dev/null"])
        } throws: { error in
            let text = (error as? ConfigurationError)?.description ?? ""
            return text.contains("PORT") && !text.contains("sk-live-1234") && text.contains("<redacted>")
        }
    }
}
