import AmodbClient
import Foundation
import Testing

/// A 401 from amodb-proxy (its challenge names the realm `amodb-proxy`) is about the token
/// the app sent to the proxy, and says so; only a 401 without it, amodb's own, is about
/// amodb's key.
@Suite(.timeLimit(.minutes(1)))
struct ProxyRefusalMessageTests {
    static let realmOnly = ["WWW-Authenticate": #"Bearer realm="amodb-proxy""#]
    static let invalidToken = ["WWW-Authenticate": #"Bearer realm="amodb-proxy", error="invalid_token""#]

    @Test func theProxyRefusingTheAppTokenNamesTheAppToken() async throws {
        let stub = StubUpstream(
            .error(401, "The client token is not one this proxy accepts.", headers: Self.realmOnly))
        let error = await #expect(throws: AmodbClientError.self) {
            try await stub.client(bearerToken: "retired-app-token").movie(id: 550)
        }
        #expect(error?.kind == .unauthorized && error?.status == 401)
        #expect(error?.message.hasPrefix("The proxy refused the app's client token (401)") == true)
        #expect(error?.message.contains("API key") == false)
        #expect(error?.serverMessage == "The client token is not one this proxy accepts.")
        #expect(error?.message.contains("retired-app-token") == false)
    }

    @Test func theProxyRefusingAUsersTokenNamesTheSignInToken() async throws {
        let stub = StubUpstream(.error(401, "The user token has expired.", headers: Self.invalidToken))
        let error = await #expect(throws: AmodbClientError.self) {
            try await stub.client(tokenProvider: { _ in "a.b.c" }).movie(id: 550)
        }
        #expect(error?.message.hasPrefix("The proxy refused the user's sign-in token (401)") == true)
    }

    @Test func theProxyAskingForATokenNoneWasSentSaysSo() async throws {
        let stub = StubUpstream(.error(401, "A valid client token is required.", headers: Self.realmOnly))
        let error = await #expect(throws: AmodbClientError.self) {
            try await stub.client(bearerToken: nil).movie(id: 550)
        }
        #expect(error?.message.hasPrefix("The proxy requires a token, and none was sent (401)") == true)
    }

    @Test func amodbsOwn401IsStillAboutTheKey() async throws {
        let stub = StubUpstream(.error(401, "Invalid API key: You must be granted a valid key."))
        let error = await #expect(throws: AmodbClientError.self) {
            try await stub.client(bearerToken: "amodb-key").movie(id: 550)
        }
        #expect(error?.message.hasPrefix("amodb rejected the API key (401)") == true)
    }
}
