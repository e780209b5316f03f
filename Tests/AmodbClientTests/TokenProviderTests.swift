import AmodbClient
import Foundation
import Testing

/// A client whose bearer token comes from the app (a signed-in user's ID token): asked
/// before each request, asked once for a fresh one when the server refuses the token as
/// invalid, and the request sent once more; a fixed token is never retried.
struct TokenProviderTests {
    /// A provider that hands out `token-1`, `token-2`, … and records what it was asked.
    final class Provider: Sendable {
        private let asked = Locked<[Bool]>([])
        /// The `forceRefresh` of each call, in order.
        var calls: [Bool] { asked.current }

        var provide: TokenProvider {
            { [asked] forceRefresh in
                asked.withLock { $0.append(forceRefresh) }
                return "token-\(asked.current.count)"
            }
        }
    }

    static let invalid = StubUpstream.Reply.error(
        401, "The user token has expired; get a fresh ID token from the sign-in provider.",
        headers: ["WWW-Authenticate": #"Bearer realm="amodb-proxy", error="invalid_token""#])

    @Test func theProvidersTokenIsSentAndItIsAskedBeforeEachRequest() async throws {
        let stub = StubUpstream(.json(Fixtures.trendingPage))
        let provider = Provider()
        let client = stub.client(tokenProvider: provider.provide)
        _ = try await client.trending(.movie, .week)
        _ = try await client.trending(.movie, .day)
        #expect(
            stub.requests.map { $0.value(forHTTPHeaderField: "Authorization") } == ["Bearer token-1", "Bearer token-2"])
        #expect(provider.calls == [false, false])
        #expect(!client.description.contains("token-"))
    }

    @Test func anInvalidTokenIsRefreshedOnceAndTheRequestRetriedOnce() async throws {
        let stub = StubUpstream(Self.invalid, .json(Fixtures.trendingPage))
        let provider = Provider()
        let page = try await stub.client(tokenProvider: provider.provide).trending(.movie, .week)
        #expect(!page.results.isEmpty)
        #expect(provider.calls == [false, true])
        #expect(
            stub.requests.map { $0.value(forHTTPHeaderField: "Authorization") } == ["Bearer token-1", "Bearer token-2"])
    }

    @Test func aSecondRefusalSurfacesWithoutAThirdTry() async throws {
        let stub = StubUpstream(Self.invalid)
        let provider = Provider()
        let error = await #expect(throws: AmodbClientError.self) {
            try await stub.client(tokenProvider: provider.provide).movie(id: 550)
        }
        #expect(error?.kind == .unauthorized)
        #expect(error?.serverMessage?.contains("expired") == true)
        #expect(stub.requests.count == 2)
        #expect(provider.calls == [false, true])
    }

    @Test func a401WithoutInvalidTokenIsNotRetried() async throws {
        let stub = StubUpstream(
            .error(
                401, "A signed-in user's ID token is required.",
                headers: ["WWW-Authenticate": #"Bearer realm="amodb-proxy""#]))
        let provider = Provider()
        await #expect(throws: AmodbClientError.self) {
            try await stub.client(tokenProvider: provider.provide).movie(id: 550)
        }
        #expect(stub.requests.count == 1)
        #expect(provider.calls == [false])
    }

    @Test func aFixedTokenIsNotRetried() async throws {
        let stub = StubUpstream(Self.invalid, .json(Fixtures.trendingPage))
        await #expect(throws: AmodbClientError.self) {
            try await stub.client(bearerToken: "app-token").trending(.movie, .week)
        }
        #expect(stub.requests.count == 1)
    }

    @Test func aProviderWithNoTokenFailsAsUnauthorizedWithoutARequest() async throws {
        let stub = StubUpstream(.json(Fixtures.trendingPage))
        struct SignedOut: Error {}
        for provider in [{ _ in nil }, { _ in throw SignedOut() }] as [TokenProvider] {
            let error = await #expect(throws: AmodbClientError.self) {
                try await stub.client(tokenProvider: provider).trending(.movie, .week)
            }
            #expect(error?.kind == .unauthorized)
            #expect(error?.message.contains("No sign-in token") == true)
        }
        #expect(stub.requests.isEmpty)
    }
}
