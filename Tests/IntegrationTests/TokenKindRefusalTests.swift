import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

/// With app tokens and users' ID tokens both accepted, a refusal says which kind the token
/// was taken for: a token that is no JWT is an app token that is not (or no longer) valid,
/// never "a malformed ID token"; a JWT that fails is told what is wrong with it as an ID token.
@Suite(.timeLimit(.minutes(1)))
struct TokenKindRefusalTests {
    static func setup() throws -> UserTokenSetup {
        try UserTokenSetup(jwks: false) { $0.clientTokens = [Secret("current-app-token")] }
    }

    @Test(arguments: ["retired-app-token-2025", "eyJhbGciOi", "abc.def.ghi", "a.b"])
    func aTokenThatIsNoJWTIsRefusedAsAnAppToken(_ token: String) async throws {
        try await withServer(try Self.setup()) { setup throws in
            let response = try await setup.get(token: token)
            #expect(response.status == 401)
            #expect(response.text.contains("neither a client token this proxy accepts (see AMODB_PROXY_TOKENS"))
            #expect(!response.text.contains("malformed") && !response.text.contains(token))
            #expect(
                try await setup.harness.metrics().value(
                    "amodb_proxy_auth_total", ["result": "invalid_static_token"]) == 1)
            #expect(setup.proxy.sandbox.totalRequestCount == 0)
        }
    }

    @Test func aJWTThatFailsIsRefusedAsAUsersIDToken() async throws {
        try await withServer(try Self.setup()) { setup throws in
            var token = Array(try setup.token(kid: nil))
            let index = token.count - 10
            token[index] = token[index] == "A" ? "B" : "A"
            let forged = String(token)
            let response = try await setup.get(token: forged)
            #expect(response.status == 401)
            #expect(response.text.contains("The user token's signature does not verify"))
            #expect(response.header("WWW-Authenticate")?.contains(#"error="invalid_token""#) == true)
            #expect(try await setup.get(token: "current-app-token").status == 200)
            #expect(try await setup.get(token: try setup.token(kid: nil)).status == 200)
        }
    }
}
