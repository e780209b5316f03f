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

    /// The reasons of a set whose only entry is the RSA key with `members` (JSON texts by
    /// name; `nil` removes one) or, with `entry`, that JSON text.
    static func reasons(_ members: [String: String?] = [:], entry: String? = nil) throws -> [String] {
        var fields = try rsaParameters().mapValues { Optional(#""\#($0)""#) }
        fields["kid"] = #""k""#
        fields.merge(members) { $1 }
        let object =
            "{" + fields.compactMap { name, json in json.map { #""\#(name)":\#($0)"# } }.joined(separator: ",") + "}"
        let set = try JSONWebKeySet(parsing: Array(#"{"keys":[\#(entry ?? object)]}"#.utf8))
        return set.skipped.map(\.reason)
    }

    /// How a reason shows an unexpected member: a string quoted, cut after 24 characters
    /// (not bytes: an emoji is one), anything else by kind, and a member not there as missing.
    @Test(arguments: [
        (#""enc""#, #""enc""#), (#""exactly-24-characters-ab""#, #""exactly-24-characters-ab""#),
        (#""25-characters-exactly-abc""#, #""25-characters-exactly-ab…""#),
        (#""\u00e9\u00e9""#, #""éé""#),
        ("\"" + String(repeating: "😀", count: 25) + "\"", "\"" + String(repeating: "😀", count: 24) + "…\""),
        (#""""#, #""""#), ("1", "not a string"), ("-1.5", "not a string"), ("true", "not a string"),
        ("false", "not a string"), ("null", "not a string"), ("[]", "not a string"), (#"["sig"]"#, "not a string"),
        ("{}", "not a string"), (#"{"use":"sig"}"#, "not a string"),
    ])
    func aReasonShowsAValueAsBefore(_ json: String, _ shown: String) throws {
        #expect(try Self.reasons(["use": json]) == ["its use is \(shown), not sig"])
        #expect(try Self.reasons(["alg": json]) == ["its alg is \(shown); RSA keys are used for RS256"])
    }

    @Test func aReasonSaysWhenAMemberIsMissingOrNotAString() throws {
        let ec = try Self.provider.get().keys["ec-1"]!.publicParameters
        let entry = { (crv: String?) in
            #"{"kid":"k","kty":"EC","x":"\#(ec["x"]!)","y":"\#(ec["y"]!)""# + (crv.map { #","crv":\#($0)"# } ?? "")
                + "}"
        }
        #expect(try Self.reasons(entry: entry(nil)) == ["its curve is missing; ES256 keys are P-256"])
        #expect(try Self.reasons(entry: entry("256")) == ["its curve is not a string; ES256 keys are P-256"])
        #expect(try Self.reasons(entry: entry(#""P-384""#)) == [#"its curve is "P-384"; ES256 keys are P-256"#])
        #expect(try Self.reasons(["kty": nil]) == ["its kty is missing; RSA and EC keys are used"])
        #expect(try Self.reasons(["kty": #""oct""#]) == [#"its kty is "oct"; RSA and EC keys are used"#])
        // A kty that is not a string has always been shown as missing.
        #expect(try Self.reasons(["kty": "5"]) == ["its kty is missing; RSA and EC keys are used"])
        #expect(try Self.reasons(["n": "5"]) == ["its n or e is missing or not base64url"])
        #expect(try Self.reasons(["e": #""A*""#]) == ["its n or e is missing or not base64url"])
    }

    @Test(arguments: ["5", #""k""#, "null", "true", "[]", #"[{"kid":"k"}]"#])
    func anEntryThatIsNoObjectIsSkipped(_ json: String) throws {
        #expect(try Self.reasons(entry: json) == ["it is not a JSON object"])
    }

    @Test(arguments: [nil, "5", #""""#, "null", #"["k"]"#] as [String?])
    func anEntryWithoutAStringKidIsSkipped(_ json: String?) throws {
        #expect(try Self.reasons(["kid": json]) == ["it has no kid"])
    }

    @Test(arguments: [
        (#"["verify"]"#, true), (#"["sign","verify"]"#, true), (#"["sign"]"#, false), ("[]", false),
        (#""verify""#, false), (#"["verify",1]"#, false), ("null", false), (#"{"verify":true}"#, false),
    ])
    func keyOperationsMustListVerify(_ json: String, _ kept: Bool) throws {
        #expect(try Self.reasons(["key_ops": json]) == (kept ? [] : ["its key_ops do not include verify"]))
    }

    @Test(arguments: [
        ("[]", JSONWebKeySet.Problem.notJSON), (#"{"keys":[]"#, .notJSON), ("", .notJSON), (#""keys""#, .notJSON),
        (#"{"keys":{}}"#, .noKeysArray), (#"{"keys":null}"#, .noKeysArray), (#"{"keys":"[]"}"#, .noKeysArray),
        (#"{"Keys":[]}"#, .noKeysArray), (#"{"keys":[{"kid":"\ud800"}]}"#, .notJSON),
    ])
    func aDocumentThatIsNoKeySetIsRefused(_ text: String, _ problem: JSONWebKeySet.Problem) {
        #expect(throws: problem) { try JSONWebKeySet(parsing: Array(text.utf8)) }
    }

    @Test func aSetListsAtMostMaxKeys() throws {
        let rsa = try Self.rsaParameters()
        let keys = (0...JSONWebKeySet.maxKeys).map { rsa.merging(["kid": "k\($0)"]) { $1 } }
        #expect(try JSONWebKeySet(parsing: Self.set(Array(keys.dropLast()))).keys.count == JSONWebKeySet.maxKeys)
        #expect(throws: JSONWebKeySet.Problem.tooManyKeys(JSONWebKeySet.maxKeys + 1)) {
            try JSONWebKeySet(parsing: Self.set(keys))
        }
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
