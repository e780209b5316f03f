import AmodbProxy
import AmodbSandbox
import AmodbTestSupport
import Foundation
import Testing

/// TMDB libraries that can only put their "API key" in the query (`api_key`) can send the
/// app token there: with app tokens set, an `api_key` equal to one of them is that token.
/// It is never forwarded, never part of the cache key (two tokens share one entry) and
/// never written to a log line.
@Suite(.timeLimit(.minutes(1)))
struct APIKeyAppTokenTests {
    static let tokens = ["app-token-one-7f3a", "app+token/two=9c"]

    static func proxy(_ adjust: @escaping (inout ProxyConfiguration) -> Void = { _ in }) throws -> SandboxedProxy {
        try SandboxedProxy { configuration in
            configuration.clientTokens = tokens.map(Secret.init)
            adjust(&configuration)
        }
    }

    @Test func anAPIKeyThatIsAnAppTokenIsAcceptedAndNeitherForwardedNorCachedNorLogged() async throws {
        try await withServer(try Self.proxy()) { setup throws in
            let first = try await setup.harness.get("/3/movie/550?api_key=app-token-one-7f3a&language=de-DE")
            #expect(first.status == 200)
            // The other token, percent-encoded as a library sends it, the parameters in another order.
            let second = try await setup.harness.get("/3/movie/550?language=de-DE&api_key=app%2Btoken%2Ftwo%3D9c")
            #expect(second.status == 200)
            #expect(second.header("Cache-Status")?.contains("hit") == true, "two tokens share one cached entry")
            #expect(second.body == first.body)
            #expect(setup.sandbox.totalRequestCount == 1)
            #expect(setup.sandbox.receivedRequests.allSatisfy { !$0.target.contains("api_key") })

            let refused = try await setup.harness.get("/3/trending/movie/week?api_key=app-token-one-7f3a-old")
            #expect(refused.status == 401)
            #expect(refused.text.contains("The api_key parameter is not a client token this proxy accepts"))
            #expect(!refused.text.contains("app-token-one-7f3a-old"))

            let logs = setup.logLines + setup.accessLog.all
            #expect(setup.accessLog.all.count == 3)
            #expect(
                !logs.contains { line in
                    line.contains("api_key") || line.contains("app-token-one") || line.contains("app+token")
                        || line.contains("app%2Btoken")
                })
        }
    }

    @Test func theAuthorizationFieldComesFirst() async throws {
        try await withServer(try Self.proxy()) { setup throws in
            let response = try await setup.harness.get(
                "/3/movie/550?api_key=app-token-one-7f3a", headers: ["Authorization": "Bearer retired-token"])
            #expect(response.status == 401)
            #expect(setup.sandbox.totalRequestCount == 0)
        }
    }

    @Test func anAPIKeyIsNoCredentialWhenTheProxyIsOpen() async throws {
        try await withServer(try SandboxedProxy()) { setup throws in
            #expect(try await setup.harness.get("/3/movie/550?api_key=anything").status == 200)
        }
    }

    @Test func anAPIKeyAppTokenWorksBesideUsersIDTokens() async throws {
        try await withServer(
            try UserTokenSetup(jwks: false) { $0.clientTokens = Self.tokens.map(Secret.init) }
        ) { setup throws in
            #expect(try await setup.get("/3/movie/550?api_key=app-token-one-7f3a", token: nil).status == 200)
            let wrong = try await setup.get("/3/movie/550?api_key=not-a-token", token: nil)
            #expect(wrong.status == 401 && wrong.text.contains("api_key parameter"))
            #expect(
                try await setup.harness.metrics().value("amodb_proxy_auth_total", ["result": "static_token"]) == 1)
        }
    }
}
