import AmodbCrypto
import AmodbTestSupport
import Foundation
import Testing

@testable import AmodbProxy

/// What a key set skips, and the reason it gives: weak RSA keys (under 2048 bits, an
/// exponent of 1 or an even one) as well as keys of another curve, use or type. An RSA key
/// with exponent 1 would accept a signature anyone can write.
struct KeySetSkipReasonsTests {
    static let provider = Result { try SignInProvider() }

    static func rsaParameters() throws -> [String: String] {
        try provider.get().keys["rsa-1"]!.publicParameters
    }

    static func set(_ keys: [[String: String]]) -> [UInt8] {
        SignInProvider.json(["keys": keys])
    }

    @Test(arguments: [[0x01], [0x02], [0x04], [0x01, 0x00, 0x00], [0x00, 0x01]] as [[UInt8]])
    func anRSAKeyNeedsAnOddExponentOfAtLeastThree(_ exponent: [UInt8]) throws {
        let n = try #require(Base64URL.decode(Self.rsaParameters()["n"]!))
        #expect(throws: CryptoError.self) { try PublicKey(rsaModulus: n, exponent: exponent) }
        #expect(!PublicKey.isAcceptableRSAExponent(exponent))
    }

    @Test(arguments: [[0x03], [0x01, 0x00, 0x01], [0x00, 0x01, 0x00, 0x01]] as [[UInt8]])
    func oddExponentsFromThreeAreKept(_ exponent: [UInt8]) throws {
        let n = try #require(Base64URL.decode(Self.rsaParameters()["n"]!))
        #expect(try PublicKey(rsaModulus: n, exponent: exponent).algorithm == .rs256)
    }

    @Test func aForgedSignatureIsWhatAnExponentOfOneWouldAccept() throws {
        // The forgery the exponent check stops: s = EM, so s¹ mod n = EM verifies.
        let message = Array("header.claims".utf8)
        let forged = ForgedSignature.rs256WithExponentOne(message, modulusBytes: 256)
        #expect(forged.count == 256 && forged.prefix(2) == [0x00, 0x01])
        #expect(
            ForgedSignature.sha256(Array("abc".utf8)).map { String(format: "%02x", $0) }.joined()
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func eachSkippedKeyIsKeptWithItsReason() throws {
        let rsa = try Self.rsaParameters()
        let ec = try Self.provider.get().keys["ec-1"]!.publicParameters
        let short = Base64URL.encode([0xC1] + [UInt8](repeating: 0x5A, count: 127))
        let set = try JSONWebKeySet(
            parsing: Self.set([
                rsa.merging(["kid": "good"]) { $1 },
                rsa.merging(["kid": "rsa-1024", "n": short]) { $1 },
                rsa.merging(["kid": "e-1", "e": "AQ"]) { $1 },
                rsa.merging(["kid": "e-2", "e": "Ag"]) { $1 },
                ec.merging(["kid": "p384", "crv": "P-384"]) { $1 },
                rsa.merging(["kid": "enc", "use": "enc"]) { $1 },
                rsa.merging(["kid": "rs384", "alg": "RS384"]) { $1 },
                ["kty": "oct", "kid": "oct", "k": "c2VjcmV0"],
                rsa,
                rsa.merging(["kid": "good"]) { $1 },
            ]))
        #expect(set.keys.keys.sorted() == ["good"])
        let reasons = Dictionary(set.skipped.map { ($0.keyID ?? "#\($0.index)", $0.reason) }) { a, _ in a }
        #expect(reasons["rsa-1024"]?.contains("an RSA key of 1024 bits") == true)
        #expect(reasons["e-1"]?.contains("exponent e = 1 is refused") == true)
        #expect(reasons["e-2"]?.contains("exponent e = 2 is refused") == true)
        #expect(reasons["p384"]?.contains(#"curve is "P-384"; ES256 keys are P-256"#) == true)
        #expect(reasons["enc"]?.contains(#"use is "enc", not sig"#) == true)
        #expect(reasons["rs384"]?.contains(#"alg is "RS384""#) == true)
        #expect(reasons["oct"]?.contains(#"kty is "oct""#) == true)
        #expect(reasons["#8"] == "it has no kid")
        #expect(
            set.skipped.last
                == JSONWebKeySet.SkippedKey(keyID: "good", index: 9, reason: "a key before it has the same kid"))
        #expect(set.skipped.count == 9)
    }

    @Test func twoSetsWithTheSameKeysHaveTheSameMaterial() throws {
        let rsa = try Self.rsaParameters()
        let one = try JSONWebKeySet(parsing: Self.set([rsa.merging(["kid": "a", "use": "sig"]) { $1 }]))
        let same = try JSONWebKeySet(parsing: Self.set([rsa.merging(["kid": "a"]) { $1 }]))
        let other = try JSONWebKeySet(parsing: Self.set([rsa.merging(["kid": "b"]) { $1 }]))
        #expect(one.material == same.material)
        #expect(one.material != other.material)
    }
}
