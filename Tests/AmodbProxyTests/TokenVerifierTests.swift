import AmodbCrypto
import AmodbTestSupport
import Foundation
import Testing

@testable import AmodbProxy

/// The verifier alone, on HS256: a token verifies only byte for byte as signed, garbage
/// of any shape is refused without a crash, and a user is named by a keyed hash of
/// (`iss`, `sub`) that neither shows the subject nor mixes two issuers' subjects.
struct TokenVerifierTests {
    static let now: Double = 1_800_000_000
    static let verifier = TokenVerifier(
        secret: Secret(SignInProvider.secret), keySet: nil,
        rules: .init(
            issuers: [SignInProvider.issuer, "https://other.example"], audiences: [SignInProvider.audience], leeway: 60),
        identifier: TokenIdentifier(amodbKey: Secret("amodb-key-for-tests")))

    @Test func everyOneByteChangeOfAGoodTokenIsRefused() throws {
        let token = Array(SignInProvider.hs256(claims: SignInProvider.claims(subject: "alice", now: Self.now)).utf8)
        #expect(try Self.verifier.verify(token, now: Self.now).get().limitKey.hasPrefix("user:"))
        var generator = SplitMix64(seed: 7)
        for index in token.indices {
            var changed = token
            let replacement = UInt8(truncatingIfNeeded: generator.next())
            guard replacement != token[index] else { continue }
            changed[index] = replacement
            #expect(throws: TokenRefusal.self) { try Self.verifier.verify(changed, now: Self.now).get() }
        }
    }

    @Test func garbageOfAnyShapeIsRefused() {
        var generator = SplitMix64(seed: 11)
        for _ in 0..<2000 {
            let count = Int(generator.next() % 300)
            var bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            // Dots and the base64url alphabet often enough to reach the JSON and the claims.
            for index in bytes.indices where generator.next() % 3 != 0 {
                bytes[index] = Array("eyJhbGciOiJIUzI1NiJ9.-_e30".utf8)[Int(generator.next() % 26)]
            }
            #expect(throws: TokenRefusal.self) { try Self.verifier.verify(bytes, now: Self.now).get() }
        }
    }

    @Test func aUserIsNamedByIssuerAndSubjectTogether() throws {
        func user(_ issuer: String, _ subject: String) throws -> UserIdentity {
            var claims = SignInProvider.claims(subject: subject, now: Self.now)
            claims["iss"] = issuer
            return try Self.verifier.verify(Array(SignInProvider.hs256(claims: claims).utf8), now: Self.now).get()
        }
        let alice = try user(SignInProvider.issuer, "alice")
        #expect(try user(SignInProvider.issuer, "alice") == alice)
        #expect(
            try user("https://other.example", "alice") != alice, "the same subject at another issuer is another user")
        #expect(alice.logName.count == 16 && !alice.limitKey.contains("alice"))
    }
}
