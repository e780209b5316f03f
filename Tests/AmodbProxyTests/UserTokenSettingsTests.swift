import Foundation
import Testing

@testable import AmodbProxy

/// The user-token settings: read from the environment, a file and flags; issuer and
/// audience required with a secret or a key set; the secret at least 32 bytes, redacted
/// by `--check-config` and in every error.
struct UserTokenSettingsTests {
    static let secret = "supabase-jwt-secret-0123456789abcdef"
    static let base = ["AMODB_KEY": "k", "AMODB_CONFIG": "/dev/null"]

    private func load(_ arguments: [String] = [], _ environment: [String: String]) throws -> Command {
        try ConfigurationLoader.load(arguments: arguments, environment: Self.base.merging(environment) { $1 })
    }

    private func serve(_ arguments: [String] = [], _ environment: [String: String]) throws -> ProxyConfiguration {
        guard case .serve(let configuration) = try load(arguments, environment) else {
            throw ConfigurationError("not a serve command")
        }
        return configuration
    }

    @Test func readsEverySetting() throws {
        let configuration = try serve(
            ["--jwt-leeway", "15"],
            [
                "AMODB_JWT_SECRET": Self.secret, "AMODB_JWT_JWKS_URL": "https://appleid.apple.com/auth/keys",
                "AMODB_JWT_ISSUER": "https://appleid.apple.com, https://securetoken.google.com/movies",
                "AMODB_JWT_AUDIENCE": "com.example.movies,movies", "AMODB_JWT_LEEWAY": "30",
            ])
        #expect(configuration.jwtSecret == Secret(Self.secret))
        #expect(configuration.jwksURL == "https://appleid.apple.com/auth/keys")
        #expect(configuration.jwtIssuers == ["https://appleid.apple.com", "https://securetoken.google.com/movies"])
        #expect(configuration.jwtAudiences == ["com.example.movies", "movies"])
        #expect(configuration.jwtLeeway == 15, "the flag beats the environment")
        #expect(configuration.verifiesUserTokens)
        #expect(ProxyConfiguration.defaults.jwtLeeway == 60 && !ProxyConfiguration.defaults.verifiesUserTokens)
    }

    @Test func theSecretComesFromAFileToo() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("jwt-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try (Self.secret + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        let configuration = try serve(
            ["--jwt-secret-file", path], ["AMODB_JWT_ISSUER": "i", "AMODB_JWT_AUDIENCE": "a"])
        #expect(configuration.jwtSecret == Secret(Self.secret))
    }

    @Test(arguments: [
        (
            ["AMODB_JWT_SECRET": secret, "AMODB_JWT_AUDIENCE": "a"],
            "AMODB_JWT_ISSUER is required with AMODB_JWT_SECRET"
        ),
        (
            ["AMODB_JWT_JWKS_URL": "https://x.example/jwks", "AMODB_JWT_ISSUER": "i"],
            "AMODB_JWT_AUDIENCE is required with AMODB_JWT_JWKS_URL"
        ),
        (
            ["AMODB_JWT_SECRET": "short-secret-29-bytes-long-xx", "AMODB_JWT_ISSUER": "i", "AMODB_JWT_AUDIENCE": "a"],
            "at least 32"
        ),
        (
            ["AMODB_JWT_JWKS_URL": "ftp://x.example/jwks", "AMODB_JWT_ISSUER": "i", "AMODB_JWT_AUDIENCE": "a"],
            "http(s) URL"
        ),
        (
            ["AMODB_JWT_SECRET": secret, "AMODB_JWT_ISSUER": "i", "AMODB_JWT_AUDIENCE": "a", "AMODB_JWT_LEEWAY": "-1"],
            "AMODB_JWT_LEEWAY"
        ),
    ])
    func aConfigurationMissingOrBendingARuleIsRefusedAtStart(_ environment: [String: String], _ says: String) {
        #expect {
            _ = try load([], environment)
        } throws: { error in
            let text = (error as? ConfigurationError)?.description ?? ""
            return text.contains(says) && !text.contains(Self.secret) && !text.contains("short-secret")
        }
    }

    @Test func checkConfigShowsTheSettingsWithTheSecretRedacted() throws {
        guard
            case .checkConfig(let configuration) = try load(
                ["--check-config"],
                [
                    "AMODB_JWT_SECRET": Self.secret, "AMODB_JWT_ISSUER": "https://ref.supabase.co/auth/v1",
                    "AMODB_JWT_AUDIENCE": "authenticated",
                ])
        else { throw ConfigurationError("not --check-config") }
        let text = ConfigurationLoader.describe(configuration)
        #expect(text.contains("AMODB_JWT_SECRET=<redacted>"))
        #expect(text.contains("AMODB_JWT_ISSUER=https://ref.supabase.co/auth/v1"))
        #expect(text.contains("AMODB_JWT_AUDIENCE=authenticated"))
        #expect(text.contains("AMODB_JWT_LEEWAY=60"))
        #expect(text.contains("# AMODB_JWT_JWKS_URL is not set"))
        #expect(!text.contains(Self.secret))
    }

    @Test func aSecretPastedIntoAnotherSettingIsRedactedInTheError() {
        #expect {
            _ = try load([], ["AMODB_JWT_SECRET": Self.secret, "AMODB_CACHE_TTL": Self.secret])
        } throws: { error in
            let text = (error as? ConfigurationError)?.description ?? ""
            return text.contains("AMODB_CACHE_TTL") && !text.contains(Self.secret)
        }
    }
}
