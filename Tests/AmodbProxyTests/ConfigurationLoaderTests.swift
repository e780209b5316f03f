import Foundation
import Testing

@testable import AmodbProxy

struct ConfigurationLoaderTests {
    private func serve(_ arguments: [String], _ environment: [String: String]) throws -> ProxyConfiguration {
        guard
            case .serve(let configuration) = try ConfigurationLoader.load(
                arguments: arguments, environment: environment)
        else {
            throw ConfigurationError("not a serve command")
        }
        return configuration
    }

    /// A file holding `text`; the caller removes it (`defer`), so no run leaves files behind.
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
        defer { try? FileManager.default.removeItem(atPath: file) }
        let configuration = try serve(
            ["--config", file, "--port", "9000"],
            ["PORT": "8000", "AMODB_CACHE_TTL": "120"])
        #expect(configuration.port == 9000)
        #expect(configuration.cacheTTL == 120)
        #expect(configuration.host == "10.0.0.1")
        #expect(configuration.upstreamURL == "https://api.amodb.dev/3")
        #expect(configuration.apiKey == Secret("from-file"))
    }

    @Test func eachRoutesLifetimeIsItsOwnSetting() throws {
        let defaults = ProxyConfiguration()
        #expect(defaults.cacheTTL == 1800)
        #expect(defaults.movieTTL == 1800)
        #expect(defaults.configurationTTL == 86_400)
        let file = try temporaryFile("AMODB_MOVIE_TTL=3600\nAMODB_CONFIGURATION_TTL=600\n")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let fromFile = try serve(["--config", file], ["AMODB_KEY": "k"])
        #expect(fromFile.movieTTL == 3600)
        #expect(fromFile.configurationTTL == 600)
        #expect(fromFile.cacheTTL == 1800, "AMODB_CACHE_TTL keeps meaning the trending lists alone")
        let fromEnvironment = try serve(
            ["--config", file, "--configuration-ttl", "172800"],
            ["AMODB_KEY": "k", "AMODB_MOVIE_TTL": "86400", "AMODB_CACHE_TTL": "60"])
        #expect(fromEnvironment.movieTTL == 86_400)
        #expect(fromEnvironment.configurationTTL == 172_800)
        #expect(fromEnvironment.cacheTTL == 60)
        guard
            case .checkConfig(let shown) = try ConfigurationLoader.load(
                arguments: ["--check-config", "--movie-ttl=86400"],
                environment: ["AMODB_KEY": "k", "AMODB_CONFIG": "/dev/null"])
        else {
            Issue.record("not --check-config")
            return
        }
        let text = ConfigurationLoader.describe(shown)
        #expect(text.contains("\nAMODB_MOVIE_TTL=86400\n"))
        #expect(text.contains("\nAMODB_CONFIGURATION_TTL=86400\n"))
        #expect(text.contains("\nAMODB_CACHE_TTL=1800\n"))
    }

    @Test func readsTheKeyFromAFileWithoutItsNewline() throws {
        let file = try temporaryFile("secret-from-file\n")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let configuration = try serve([], ["AMODB_KEY_FILE": file, "AMODB_CONFIG": "/dev/null"])
        #expect(configuration.apiKey == Secret("secret-from-file"))
        #expect("\(configuration.apiKey)" == "<redacted>")
        var dumped = ""
        dump(configuration, to: &dumped)
        #expect(!dumped.contains("secret-from-file"))
    }

    @Test(arguments: [
        (["--port", "70000"], "PORT"),
        (["--port", "abc"], "PORT"),
        (["--cache-ttl", "-5"], "AMODB_CACHE_TTL"),
        (["--movie-ttl", "a day"], "AMODB_MOVIE_TTL"),
        (["--movie-ttl", "0"], "AMODB_MOVIE_TTL"),
        (["--configuration-ttl", "-1"], "AMODB_CONFIGURATION_TTL"),
        (["--configuration-ttl", ""], "AMODB_CONFIGURATION_TTL"),
        (["--upstream-url", "ftp://x/3"], "AMODB_UPSTREAM_URL"),
        (["--log-level", "loud"], "AMODB_LOG_LEVEL"),
        (["--bogus"], "unknown option"),
        (["--port"], "needs a value"),
        (["--read-buffer-bytes", "4096"], "AMODB_READ_BUFFER_BYTES"),
        (["--log-format", "xml\nsecond line"], "AMODB_LOG_FORMAT"),
    ])
    func badValuesAreOneLineErrorsNamingTheSetting(_ arguments: [String], _ named: String) {
        #expect {
            _ = try ConfigurationLoader.load(
                arguments: arguments, environment: ["AMODB_KEY": "k", "AMODB_CONFIG": "/dev/null"])
        } throws: { error in
            let error = error as? ConfigurationError
            return error?.description.contains(named) == true && error?.description.contains("\n") == false
                && (error?.setting == named || named.hasPrefix("unknown") || named.hasPrefix("needs"))
        }
    }

    @Test(arguments: [
        ("AMODB_CACHE_TTL", "1e19"), ("AMODB_MOVIE_TTL", "1e19"), ("AMODB_CONFIGURATION_TTL", "nan"),
        ("AMODB_UPSTREAM_TIMEOUT", "1e300"), ("AMODB_MAX_STALE", "1e19"),
        ("AMODB_NEGATIVE_TTL", "1e12"), ("AMODB_SNAPSHOT_INTERVAL", "1e300"), ("AMODB_RETRY_AFTER_MAX", "inf"),
        ("AMODB_SHUTDOWN_GRACE", "1e19"), ("AMODB_HEAD_TIMEOUT", "nan"), ("AMODB_IDLE_TIMEOUT", "1e19"),
        ("AMODB_WRITE_TIMEOUT", "-1"), ("AMODB_CACHE_MAX_BYTES", "9223372036854775807"),
        ("AMODB_CACHE_MAX_BYTES", "1e19"),
        ("PORT", "99999999999999999999"), ("AMODB_RATE_LIMIT", "0"), ("AMODB_CLIENT_RATE_LIMIT", "1e19"),
        ("AMODB_MAX_CONNECTIONS", "0"), ("AMODB_MAX_PIPELINED", "100000"),
    ])
    func numbersOutOfRangeAreRefusedNamingTheSetting(_ variable: String, _ value: String) {
        #expect {
            _ = try ConfigurationLoader.load(
                arguments: [], environment: ["AMODB_KEY": "k", "AMODB_CONFIG": "/dev/null", variable: value])
        } throws: { error in
            let error = error as? ConfigurationError
            return error?.setting == variable && error?.description.hasPrefix(variable) == true
                && error?.description.contains("\n") == false
        }
    }

    @Test func everyNumericSettingHasAnUpperBound() throws {
        let defaults = ProxyConfiguration()
        let numeric = ConfigurationLoader.settings.filter {
            Double($0.show(defaults)) != nil && $0.variable != "AMODB_KEY"
        }
        #expect(numeric.count >= 20)
        for setting in numeric {
            #expect(throws: ConfigurationError.self, "\(setting.variable)=1e300") {
                _ = try ConfigurationLoader.load(
                    arguments: [],
                    environment: ["AMODB_KEY": "k", "AMODB_CONFIG": "/dev/null", setting.variable: "1e300"])
            }
            #expect(throws: ConfigurationError.self, "\(setting.variable)=99999999999999999999") {
                _ = try ConfigurationLoader.load(
                    arguments: [],
                    environment: [
                        "AMODB_KEY": "k", "AMODB_CONFIG": "/dev/null", setting.variable: "99999999999999999999",
                    ])
            }
        }
    }

    @Test(arguments: ["\u{FEFF}key-with-bom", "  key-in-spaces\t\r\n", "\u{FEFF}\n key-after-bom-and-newline \n\n"])
    func aKeyFileLosesItsByteOrderMarkAndSurroundingWhiteSpace(_ contents: String) throws {
        let file = try temporaryFile(contents)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let configuration = try serve([], ["AMODB_KEY_FILE": file, "AMODB_CONFIG": "/dev/null"])
        #expect(configuration.apiKey.revealed.hasPrefix("key-"))
        #expect(configuration.apiKey.revealed.unicodeScalars.allSatisfy { $0.isASCII && $0.value > 0x20 })
    }

    @Test(arguments: [
        ("sk-live\r\nX-Injected: 1", "carriage return"), ("sk-live\nsecond", "line feed"), ("sk-live\0tail", "NUL"),
        ("sk-live\u{1B}[31m", "U+1B"), ("sk-live\u{7F}del", "U+7F"), ("sk-live\u{85}next", "U+85"),
    ])
    func aKeyWithAControlCharacterIsRefusedWithoutShowingIt(_ key: String, _ said: String) throws {
        let file = try temporaryFile(key)
        defer { try? FileManager.default.removeItem(atPath: file) }
        for environment in [["AMODB_KEY_FILE": file], ["AMODB_KEY": key]] {
            #expect {
                _ = try ConfigurationLoader.load(
                    arguments: [], environment: environment.merging(["AMODB_CONFIG": "/dev/null"]) { $1 })
            } throws: { error in
                let error = error as? ConfigurationError
                return error?.description.contains(said) == true && error?.description.contains("sk-live") == false
                    && error?.setting == environment.keys.first
            }
        }
    }

    @Test func anEmptyKeyFileIsAnError() throws {
        let file = try temporaryFile("\u{FEFF} \n")
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect {
            _ = try ConfigurationLoader.load(
                arguments: [], environment: ["AMODB_KEY_FILE": file, "AMODB_CONFIG": "/dev/null"])
        } throws: { error in
            (error as? ConfigurationError)?.setting == "AMODB_KEY_FILE"
        }
    }

    @Test(arguments: [
        (["--port", "sk-file-5678"], ["AMODB_KEY_FILE": "KEYFILE"]),  // env file, bad flag
        (["--key-file", "KEYFILE"], ["PORT": "sk-file-5678"]),  // flag file, bad env (read first)
        (["--key-file=KEYFILE", "--cache-ttl", "x sk-file-5678"], [:]),
        (["--config=SETTINGS"], [:]),  // bad line before the key-file line
    ])
    func aKeyFromTheKeyFilePastedIntoAnotherSettingIsRedacted(_ arguments: [String], _ environment: [String: String])
        throws
    {
        let file = try temporaryFile("sk-file-5678\n")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let settings = try temporaryFile("PORT=sk-file-5678\nAMODB_KEY_FILE=\(file)\n")
        defer { try? FileManager.default.removeItem(atPath: settings) }
        let arguments = arguments.map {
            $0.replacingOccurrences(of: "KEYFILE", with: file).replacingOccurrences(of: "SETTINGS", with: settings)
        }
        let environment = environment.mapValues { $0.replacingOccurrences(of: "KEYFILE", with: file) }.merging([
            "AMODB_CONFIG": "/dev/null"
        ]) { $1 }
        #expect {
            _ = try ConfigurationLoader.load(arguments: arguments, environment: environment)
        } throws: { error in
            let text = (error as? ConfigurationError)?.description ?? ""
            return !text.contains("sk-file-5678") && text.contains("<redacted>")
        }
    }

    /// Secrets given anywhere are redacted, not only those read before the error struck.
    @Test(arguments: ["sk-live-4321", "tok-ghijkl"])
    func aSecretInTheSettingsFileIsRedactedInAnErrorOnALineBeforeIt(_ pasted: String) throws {
        let file = try temporaryFile(
            "PORT=\(pasted)\nAMODB_KEY=sk-live-4321\nAMODB_PROXY_TOKENS=tok-abcdef,tok-ghijkl\n")
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect {
            _ = try ConfigurationLoader.load(arguments: ["--config", file], environment: [:])
        } throws: { error in
            let text = (error as? ConfigurationError)?.description ?? ""
            return text.hasPrefix("PORT") && !text.contains(pasted) && text.contains("<redacted>")
        }
    }

    @Test func aSettingsFileWithAByteOrderMarkReads() throws {
        let file = try temporaryFile("\u{FEFF}PORT=7001\nAMODB_KEY=k\n")
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect(try serve(["--config", file], [:]).port == 7001)
    }

    @Test func anExplicitConfigFileMustExist() {
        #expect(throws: ConfigurationError.self) {
            _ = try ConfigurationLoader.load(
                arguments: ["--config", "/nonexistent/file"], environment: ["AMODB_KEY": "k"])
        }
    }

    /// A settings file in the working directory that nobody named is never read: whoever can
    /// write there would otherwise choose where the key is sent. One that sets the upstream
    /// stops the start, naming the file and the setting, and showing neither its URL nor
    /// anything else it holds.
    @Test func anUnnamedSettingsFileCannotSetTheUpstream() throws {
        let file = try temporaryFile("AMODB_UPSTREAM_URL=https://collector.example/3\nAMODB_KEY=sk-file-8765\n")
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect {
            _ = try ConfigurationLoader.load(arguments: [], environment: ["AMODB_KEY": "k"], unnamedFile: file)
        } throws: { error in
            let refusal = try #require(error as? ConfigurationError)
            return refusal.setting == "AMODB_UPSTREAM_URL" && refusal.description.contains(file)
                && refusal.description.contains("AMODB_UPSTREAM_URL")
                && !refusal.description.contains("collector.example") && !refusal.description.contains("sk-file-8765")
        }
    }

    /// Any other setting in such a file stops the start too, naming `AMODB_CONFIG`: settings
    /// meant to apply (client tokens, limits) are never dropped without a word. A file of
    /// comments only, as the repository's example is, is no settings file and is passed over.
    @Test func anUnnamedSettingsFileIsRefusedUnlessItHoldsOnlyComments() throws {
        let withSettings = try temporaryFile("# tokens\nAMODB_PROXY_TOKENS_FILE=/run/secrets/tokens\n")
        let commentsOnly = try temporaryFile("# AMODB_UPSTREAM_URL=https://api.amodb.dev/3\n\n# PORT=8080\n")
        defer {
            try? FileManager.default.removeItem(atPath: withSettings)
            try? FileManager.default.removeItem(atPath: commentsOnly)
        }
        #expect {
            _ = try ConfigurationLoader.load(arguments: [], environment: ["AMODB_KEY": "k"], unnamedFile: withSettings)
        } throws: { error in
            let refusal = try #require(error as? ConfigurationError)
            return refusal.setting == "AMODB_CONFIG" && refusal.description.contains(withSettings)
                && refusal.description.contains("AMODB_PROXY_TOKENS_FILE")
        }
        let configuration = try #require(
            try? ConfigurationLoader.load(arguments: [], environment: ["AMODB_KEY": "k"], unnamedFile: commentsOnly))
        guard case .serve(let served) = configuration else {
            Issue.record("not serve")
            return
        }
        #expect(served.upstreamURL == ProxyConfiguration.defaults.upstreamURL)
        let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("config/amodb-proxy.conf").path
        #expect(throws: Never.self, "the repository's example, where `swift run` starts") {
            _ = try ConfigurationLoader.load(arguments: ["--sandbox"], environment: [:], unnamedFile: example)
        }
    }

    /// A file the operator named, by flag or environment, may set the upstream.
    @Test func aNamedSettingsFileMaySetTheUpstream() throws {
        let file = try temporaryFile("AMODB_UPSTREAM_URL=https://amodb.internal/3\n")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let byFlag = try serve(["--config", file], ["AMODB_KEY": "k"])
        let byEnvironment = try serve([], ["AMODB_KEY": "k", "AMODB_CONFIG": file])
        #expect(byFlag.upstreamURL == "https://amodb.internal/3")
        #expect(byEnvironment.upstreamURL == "https://amodb.internal/3")
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
        let configuration = try serve(
            ["--port=1234", "--idle-timeout=5"], ["AMODB_KEY": "k", "AMODB_CONFIG": "/dev/null"])
        #expect(configuration.port == 1234)
        #expect(configuration.timeouts.idleSeconds == 5)
    }

    @Test func aKeyPastedIntoTheWrongSettingIsNotEchoed() {
        #expect {
            _ = try ConfigurationLoader.load(
                arguments: ["--port", "sk-live-1234"],
                environment: ["AMODB_KEY": "sk-live-1234", "AMODB_CONFIG": "/dev/null"])
        } throws: { error in
            let text = (error as? ConfigurationError)?.description ?? ""
            return text.contains("PORT") && !text.contains("sk-live-1234") && text.contains("<redacted>")
        }
    }
}
