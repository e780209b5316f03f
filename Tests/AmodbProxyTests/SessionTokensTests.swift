import AmodbCrypto
import Testing

@testable import AmodbProxy

/// App Attest's session tokens and the lone replica's store.
struct SessionTokensTests {
    static let keyID = Array(repeating: UInt8(7), count: 32)
    static let name = "attested:0707070707070707"

    @Test func aTokenIsGoodForItsLifetimeForItsKeyOnly() throws {
        let tokens = SessionTokens(secrets: [], amodbKey: Secret("the-amodb-key"), lifetime: 3600)
        let (token, expires) = tokens.issue(for: Self.keyID, now: 1_000)
        #expect(expires == 4_600)
        #expect(try tokens.verify(Array(token.utf8).span, now: 2_000).get() == Self.name)
        #expect(tokens.verify(Array(token.utf8).span, now: 4_600) == .failure(.expired))
        // Another key id put in its place: the code no longer matches.
        let parts = token.split(separator: ".")
        let forged = "as1." + Base64URL.encode(Array(repeating: UInt8(8), count: 32)) + "." + parts[2] + "." + parts[3]
        #expect(tokens.verify(Array(forged.utf8).span, now: 2_000) == .failure(.badSignature))
        #expect(tokens.verify(Array("as1.x".utf8).span, now: 2_000) == .failure(.malformed))
    }

    @Test func anotherProxyKeyOrARotatedOutSecretRefusesATokenAndTheOldSecretStillChecksWhileListed() throws {
        let amodb = SessionTokens(secrets: [], amodbKey: Secret("the-amodb-key"), lifetime: 60)
        let other = SessionTokens(secrets: [], amodbKey: Secret("another-amodb-key"), lifetime: 60)
        let (token, _) = amodb.issue(for: Self.keyID, now: 0)
        #expect(other.verify(Array(token.utf8).span, now: 1) == .failure(.badSignature))

        let old = Secret(String(repeating: "o", count: 32))
        let new = Secret(String(repeating: "n", count: 32))
        let (before, _) = SessionTokens(secrets: [old], amodbKey: Secret("k"), lifetime: 60).issue(
            for: Self.keyID, now: 0)
        let rotating = SessionTokens(secrets: [new, old], amodbKey: Secret("k"), lifetime: 60)
        #expect(try rotating.verify(Array(before.utf8).span, now: 1).get() == Self.name, "the old one still checks")
        let (after, _) = rotating.issue(for: Self.keyID, now: 0)
        #expect(
            try SessionTokens(secrets: [new], amodbKey: Secret("k"), lifetime: 60).verify(
                Array(after.utf8).span, now: 1
            )
            .get() == Self.name, "the new one signs")
        #expect(
            SessionTokens(secrets: [new], amodbKey: Secret("k"), lifetime: 60).verify(Array(before.utf8).span, now: 1)
                == .failure(.badSignature), "rotated out")
    }

    @Test func aChallengeIsTakenOnceWithinItsLifetimeAndACounterOnlyRises() async {
        let store = MemoryAttestStore()
        #expect(store.issue(challenge: "c1", lifetime: 120, now: 0))
        guard case .answer(true) = store.consume(challenge: "c1", now: 10) else {
            Issue.record("not taken")
            return
        }
        guard case .answer(false) = store.consume(challenge: "c1", now: 10) else {
            Issue.record("taken twice")
            return
        }
        #expect(store.issue(challenge: "c2", lifetime: 120, now: 0))
        guard case .answer(false) = store.consume(challenge: "c2", now: 121) else {
            Issue.record("taken after it expired")
            return
        }
        _ = store.save(StoredAttestKey(keyID: Self.keyID, publicKey: [4], counter: 0, app: "A.b", development: false))
        for (counter, expected) in [(UInt32(1), true), (1, false), (0, false), (5, true), (4, false)] {
            guard case .answer(let advanced) = store.advance(Self.keyID, to: counter) else { return }
            #expect(advanced == expected, "counter \(counter)")
        }
        guard case .answer(false) = store.advance([1], to: 9) else {
            Issue.record("an unknown key advanced")
            return
        }
    }
}
