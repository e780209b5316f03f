import AmodbCrypto
import AmodbTestSupport
import Foundation
import Testing

@testable import AmodbProxy

/// A token that verified is remembered by a digest, so the next request with it is a
/// lookup; what depends on the clock is checked again on every use; refusals are not
/// remembered; and the memory is bounded, keeping the tokens in use.
struct VerifiedTokensTests {
    static let now: Double = 1_800_000_000

    static func verifier(capacity: Int = 65_536) -> TokenVerifier {
        TokenVerifier(
            secret: Secret(SignInProvider.secret), keySet: nil,
            rules: .init(issuers: [SignInProvider.issuer], audiences: [SignInProvider.audience], leeway: 60),
            identifier: TokenIdentifier(amodbKey: Secret("amodb-key-for-tests")), remembering: capacity)
    }

    static func token(_ subject: String = "alice", _ extra: [String: any Sendable] = [:]) -> [UInt8] {
        Array(
            SignInProvider.hs256(claims: SignInProvider.claims(subject: subject, now: now).merging(extra) { $1 }).utf8)
    }

    static func digest(_ verifier: TokenVerifier, _ token: [UInt8]) -> SipHash128.Digest {
        verifier.memory.digest(of: token.span)
    }

    @Test func aTokenThatVerifiedIsRememberedByItsDigest() throws {
        let verifier = Self.verifier()
        let token = Self.token()
        #expect(verifier.remembered(Self.digest(verifier, token), now: Self.now) == nil)
        let user = try verifier.verify(token, now: Self.now).get()
        #expect(verifier.remembered(Self.digest(verifier, token), now: Self.now + 5) == user)
        #expect(verifier.memory.count == 1)
        #expect(try verifier.verify(token, now: Self.now + 5).get() == user)
        #expect(verifier.memory.count == 1)
    }

    @Test func aRememberedTokenIsCheckedAgainstTheClockOfEachUse() throws {
        let verifier = Self.verifier()
        let token = Self.token("bob", ["nbf": Int(Self.now) - 10])
        _ = try verifier.verify(token, now: Self.now).get()
        let digest = Self.digest(verifier, token)
        // An hour's lifetime plus the 60 s leeway, then no more.
        #expect(verifier.remembered(digest, now: Self.now + 3600 + 60) != nil)
        #expect(verifier.remembered(digest, now: Self.now + 3600 + 61) == nil)
        #expect(throws: TokenRefusal.expired) { try verifier.verify(token, now: Self.now + 3600 + 61).get() }
        // A clock set back before nbf (beyond the leeway) does not take the remembered answer.
        let early = Self.token("carol", ["nbf": Int(Self.now)])
        _ = try verifier.verify(early, now: Self.now).get()
        #expect(verifier.remembered(Self.digest(verifier, early), now: Self.now - 61) == nil)
        #expect(throws: TokenRefusal.notYetValid) { try verifier.verify(early, now: Self.now - 61).get() }
        #expect(verifier.remembered(Self.digest(verifier, early), now: Self.now) != nil)
    }

    @Test func refusedTokensAreNotRemembered() {
        let verifier = Self.verifier()
        var forged = Self.token()
        forged[forged.count - 2] ^= 1
        #expect(throws: TokenRefusal.self) { try verifier.verify(forged, now: Self.now).get() }
        #expect(throws: TokenRefusal.wrongAudience) {
            try verifier.verify(Self.token("dave", ["aud": "someone-else"]), now: Self.now).get()
        }
        #expect(verifier.memory.count == 0)
    }

    @Test func theMemoryIsBoundedAndKeepsTheTokensInUse() {
        let memory = VerifiedTokens(capacity: 256)
        let user = TokenIdentifier(amodbKey: Secret("k")).user(issuer: "i", subject: "s")
        let remembered = VerifiedTokens.Remembered(user: user.hash, expires: .infinity, validFrom: 0, generation: 0)
        let kept = SipHash128.Digest(low: 42, high: 42)
        memory.remember(remembered, at: kept)
        var generator = SplitMix64(seed: 3)
        for _ in 0..<20_000 {
            memory.remember(remembered, at: SipHash128.Digest(low: generator.next(), high: generator.next()))
            #expect(memory.remembered(kept) != nil)
        }
        #expect(memory.count <= 256)
    }

    @Test func aRememberedUserIsNamedByTheHashItKeeps() {
        let user = UserIdentity(hash: 0x0123_4567_89ab_cdef)
        #expect(user.logName == "0123456789abcdef" && user.limitKey == "user:0123456789abcdef")
        #expect(UserIdentity(hash: 0xF).logName == "000000000000000f")
        let named = TokenIdentifier(amodbKey: Secret("k")).user(issuer: "i", subject: "s")
        #expect(UserIdentity(hash: named.hash) == named)
    }
}
