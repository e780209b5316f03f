import Foundation
import Testing

@testable import AmodbProxy

/// Settings for users' tokens that could only fail quietly are refused at start: rules
/// (issuer, audience, leeway) with no key to check tokens with, and a key set URL with a
/// user name or password in it, which the error never repeats.
struct UserTokenKeySourceTests {
    static let base = ["AMODB_KEY": "k", "AMODB_CONFIG": "/dev/null"]

    private func load(_ arguments: [String] = [], _ environment: [String: String]) throws -> Command {
        try ConfigurationLoader.load(arguments: arguments, environment: Self.base.merging(environment) { $1 })
    }

    @Test(arguments: [
        ([], ["AMODB_JWT_ISSUER": "https://appleid.apple.com"], "AMODB_JWT_ISSUER"),
        ([], ["AMODB_JWT_AUDIENCE": "com.example.movies"], "AMODB_JWT_AUDIENCE"),
        ([], ["AMODB_JWT_ISSUER": "i", "AMODB_JWT_AUDIENCE": "a"], "AMODB_JWT_ISSUER"),
        (["--jwt-leeway", "30"], [:], "AMODB_JWT_LEEWAY"),
        (["--jwt-audience", "a"], ["AMODB_JWT_JWKS_URL": ""], "AMODB_JWT_AUDIENCE"),
    ])
    func rulesWithoutAKeySourceRefuseToStart(arguments: [String], environment: [String: String], rule: String) {
        #expect {
            _ = try load(arguments, environment)
        } throws: { error in
            guard let error = error as? ConfigurationError else { return false }
            return error.description.contains("\(rule) is set, but neither AMODB_JWT_JWKS_URL nor AMODB_JWT_SECRET")
                && error.setting == "AMODB_JWT_JWKS_URL"
        }
    }

    @Test func emptyRulesAndTheDefaultLeewayWithoutAKeySourceAreNoRules() throws {
        guard
            case .serve(let configuration) = try load(
                [], ["AMODB_JWT_ISSUER": "", "AMODB_JWT_AUDIENCE": "", "AMODB_JWT_LEEWAY": "60"])
        else {
            throw ConfigurationError("not a serve command")
        }
        #expect(!configuration.verifiesUserTokens)
    }

    @Test(arguments: [
        "https://svc-user:hunter2-password@auth.example.com/.well-known/jwks.json",
        "https://:hunter2-password@auth.example.com/jwks",
        "https://svc-user@auth.example.com/jwks",
        "ftp://svc-user:hunter2-password@auth.example.com/jwks",
    ])
    func aKeySetURLWithCredentialsRefusesToStartWithoutShowingThem(_ url: String) {
        #expect {
            _ = try load([], ["AMODB_JWT_JWKS_URL": url, "AMODB_JWT_ISSUER": "i", "AMODB_JWT_AUDIENCE": "a"])
        } throws: { error in
            guard let error = error as? ConfigurationError else { return false }
            return error.description.contains("user name or password") && error.setting == "AMODB_JWT_JWKS_URL"
                && !error.description.contains("hunter2") && !error.description.contains("svc-user")
        }
    }

    @Test func anAtSignInTheKeySetPathIsNoCredential() throws {
        guard
            case .serve(let configuration) = try load(
                [],
                [
                    "AMODB_JWT_JWKS_URL": "https://auth.example.com/keys/@team", "AMODB_JWT_ISSUER": "i",
                    "AMODB_JWT_AUDIENCE": "a",
                ])
        else { throw ConfigurationError("not a serve command") }
        #expect(configuration.jwksURL == "https://auth.example.com/keys/@team")
    }
}
