import AmodbClient
import AmodbProxy
import AmodbTestSupport
import Foundation
import Synchronization
import Testing

/// An app's `AmodbClient` with a token provider, against the built proxy: it sends the
/// signed-in user's current ID token, and when the proxy refuses it as invalid (expired)
/// it asks the provider for a fresh one and tries once more.
@Suite(.timeLimit(.minutes(1)))
struct SignedInClientTests {
    @Test func anExpiredTokenIsRefreshedOnceAndTheCallSucceeds() async throws {
        try await withServer(try UserTokenSetup()) { setup throws in
            #expect(try await awaitKeySet(setup))
            let now = UserTokenSetup.now
            let expired = try setup.token("alice", claims: ["iat": Int(now) - 7200, "exp": Int(now) - 3600])
            let fresh = try setup.token("alice", kid: "ec-1")
            let asked = Mutex<[Bool]>([])
            let client = AmodbClient(
                baseURL: setup.harness.baseURL,
                tokenProvider: { forceRefresh in
                    asked.withLock { $0.append(forceRefresh) }
                    return forceRefresh ? fresh : expired
                }, timeout: 30)
            let movie = try await client.movie(id: 550)
            #expect(movie.id == 550)
            #expect(asked.withLock { $0 } == [false, true])
            let metrics = try await setup.harness.metrics()
            #expect(try metrics.value("amodb_proxy_auth_total", ["result": "expired"]) == 1)
            #expect(try metrics.value("amodb_proxy_auth_total", ["result": "verified"]) == 1)
        }
    }

    @Test func aTokenTheProxyCannotVerifyFailsAsUnauthorizedAfterOneRefresh() async throws {
        try await withServer(try UserTokenSetup()) { setup throws in
            #expect(try await awaitKeySet(setup))
            let wrongAudience = try setup.token("alice", claims: ["aud": "com.example.other"])
            let client = AmodbClient(baseURL: setup.harness.baseURL, tokenProvider: { _ in wrongAudience }, timeout: 30)
            let error = await #expect(throws: AmodbClientError.self) { try await client.trending(.movie, .week) }
            #expect(error?.kind == .unauthorized)
            #expect(error?.serverMessage?.contains("wrong audience") == true)
            #expect(!(error?.message.contains(wrongAudience) ?? true))
            #expect(
                try await setup.harness.metrics().value("amodb_proxy_auth_total", ["result": "wrong_audience"]) == 2)
            #expect(setup.proxy.sandbox.totalRequestCount == 0)
        }
    }
}
