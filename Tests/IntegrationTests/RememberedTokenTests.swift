import AmodbCrypto
import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

/// A user's token that verified is remembered, and stays good only while what it was
/// checked against holds: its expiry against each request's clock, and the keys that
/// verified it (a rotation that changes a key ends the tokens it had verified).
@Suite(.timeLimit(.minutes(1)))
struct RememberedTokenTests {
    @Test func aKeySetChangeEndsTheTokensItsOldKeysVerified() async throws {
        let provider = try SignInProvider()
        try await withServer(try UserTokenSetup(provider: provider)) { setup throws in
            #expect(try await awaitKeySet(setup))
            let token = try setup.token(kid: "rsa-1")
            #expect(try await setup.get(token: token).status == 200)
            #expect(try await setup.get(token: token).status == 200)

            // The provider replaces the key behind "rsa-1"; an unknown kid makes the proxy fetch at once.
            var rotated = provider
            rotated.keys["rsa-1"] = try SignInProvider.spareRSAKey(0)
            rotated.keys["rsa-2"] = try SignInProvider.spareRSAKey(1)
            setup.keys.answer(.keySet(rotated.keySet()))
            #expect(try await setup.get(token: try rotated.token(kid: "rsa-2", claims: Self.claims())).status == 401)
            #expect(
                try await eventually(within: 20) {
                    try await setup.get(token: try rotated.token(kid: "rsa-2", claims: Self.claims())).status == 200
                })
            let after = try await setup.get(token: token)
            #expect(after.status == 401 && after.text.contains("bad signature"))
            #expect(try await setup.get(token: try rotated.token(kid: "rsa-1", claims: Self.claims())).status == 200)
        }
    }

    @Test func aRememberedTokenExpiresOnTime() async throws {
        let clock = ManualClock(Date().timeIntervalSince1970)
        try await withServer(
            try UserTokenSetup(jwks: false, clock: clock) { $0.jwtLeeway = 0 }
        ) { setup throws in
            let token = try setup.token(kid: nil, now: clock.now())
            #expect(try await setup.get(token: token).status == 200)
            // `exp` is a whole second, an hour after `iat`.
            clock.advance(by: 3599)
            #expect(try await setup.get(token: token).status == 200)
            clock.advance(by: 1.5)
            let expired = try await setup.get(token: token)
            #expect(expired.status == 401 && expired.text.contains("expired"))
        }
    }

    static func claims() -> [String: any Sendable] {
        SignInProvider.claims(subject: "user-2", now: UserTokenSetup.now)
    }
}
