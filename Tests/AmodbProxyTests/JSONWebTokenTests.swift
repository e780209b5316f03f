import AmodbCrypto
import Foundation
import Testing

@testable import AmodbProxy

/// Reading compact JWS and key sets: RFC 7515's appendix examples read and verify through
/// the same parsing the proxy's verifier uses, and what a key set keeps and skips.
struct JSONWebTokenTests {
    static let payload =
        "eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"

    /// RFC 7515 Appendix A.2 and A.3's public keys as JSON Web Keys, in one set.
    static let appendixKeySet = #"""
        {"keys":[
         {"kty":"RSA","kid":"a2","use":"sig","e":"AQAB","n":"ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pCgNMsD1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ"},
         {"kty":"EC","kid":"a3","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}
        ]}
        """#

    @Test func readsRFC7515AppendixA1AndItsHMACVerifies() throws {
        let token =
            "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9." + Self.payload + ".dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        let jwt = try JSONWebToken(Array(token.utf8))
        #expect(jwt.algorithm == "HS256")
        #expect(jwt.issuer == "joe" && jwt.expires == 1_300_819_380 && jwt.subject == nil)
        let key = try #require(
            Base64URL.decode("AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow"))
        #expect(HMACSHA256(key: key).isAuthenticationCode(jwt.signature, of: jwt.signingInput))
    }

    @Test(arguments: [
        (
            "a2", "eyJhbGciOiJSUzI1NiJ9",
            "cC4hiUPoj9Eetdgtv3hF80EGrhuB__dzERat0XF9g2VtQgr9PJbu3XOiZj5RZmh7AAuHIm4Bh-0Qc_lF5YKt_O8W2Fp5jujGbds9uJdbF9CUAr7t1dnZcAcQjbKBYNX4BAynRFdiuB--f_nZLgrnbyTyWzO75vRK5h6xBArLIARNPvkSjtQBMHlb1L07Qe7K0GarZRmB_eSN9383LcOLn6_dO--xi12jzDwusC-eOkHWEsqtFZESc6BfI7noOPqvhJ1phCnvWh6IeYI2w9QOYEUipUTI8np6LbgGY9Fs98rqVt5AXLIhWkWywlVmtVrBp0igcN_IoypGlUPQGe77Rw"
        ),
        (
            "a3", "eyJhbGciOiJFUzI1NiJ9",
            "DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q"
        ),
    ])
    func readsRFC7515AppendixA2AndA3AndTheirKeySetVerifiesThem(_ kid: String, _ header: String, _ signature: String)
        throws
    {
        let set = try JSONWebKeySet(parsing: Array(Self.appendixKeySet.utf8))
        #expect(set.keys.count == 2)
        let jwt = try JSONWebToken(Array((header + "." + Self.payload + "." + signature).utf8))
        let key = try #require(set.keys[kid])
        #expect(key.algorithm.rawValue == jwt.algorithm)
        #expect(key.isValidSignature(jwt.signature, of: jwt.signingInput))
        let other = try #require(set.keys[kid == "a2" ? "a3" : "a2"])
        #expect(!other.isValidSignature(jwt.signature, of: jwt.signingInput))
    }

    @Test(arguments: [
        ("e30.e30", TokenRefusal.malformed(.partCount)), ("e30.e30.e30.e30", .malformed(.partCount)),
        ("e30.e30..", .malformed(.partCount)),
        ("e3=.e30.", .malformed(.encoding)), ("W10.e30.", .malformed(.headerJSON)),
        ("e30.W10.", .malformed(.claimsJSON)),
        ("e30.e30.", .malformed(.missingAlgorithm)),
    ])
    func refusesWhatIsNoToken(_ text: String, _ refusal: TokenRefusal) {
        #expect(throws: refusal) { try JSONWebToken(Array(text.utf8)) }
    }

    @Test func refusesAClaimOfTheWrongType() {
        for claims in [#"{"exp":"tomorrow"}"#, #"{"sub":7}"#, #"{"aud":[1]}"#, #"{"iss":["a"]}"#] {
            let token =
                Base64URL.encode(Array(#"{"alg":"HS256"}"#.utf8)) + "." + Base64URL.encode(Array(claims.utf8)) + "."
            #expect(throws: TokenRefusal.malformed(.claimType)) { try JSONWebToken(Array(token.utf8)) }
        }
    }

    /// A token of `header` and `claims` (JSON texts) with an empty signature.
    static func token(_ header: String, _ claims: String) -> [UInt8] {
        Array((Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8)) + ".").utf8)
    }

    @Test(
        arguments: [
            ("1300819380", 1_300_819_380), ("1300819380.5", 1_300_819_380.5), ("-5", -5), ("0", 0), ("1e9", 1e9),
            ("123456789012345678901234567890", 1.2345678901234568e29),
        ] as [(String, Double)])
    func aNumericDateIsAnyNumber(_ json: String, _ seconds: Double) throws {
        let jwt = try JSONWebToken(Self.token(#"{"alg":"HS256"}"#, #"{"exp":\#(json),"nbf":\#(json),"iat":\#(json)}"#))
        #expect(jwt.expires == seconds && jwt.notBefore == seconds && jwt.issuedAt == seconds)
    }

    /// RFC 7519 §2: a NumericDate is a number. (JSONSerialization gave a Bool as an NSNumber,
    /// so `true` was once read as 1.)
    @Test(arguments: ["exp", "nbf", "iat"], ["true", "false", "null", #""1300819380""#, "[1]", "{}"])
    func aNumericDateIsNoBoolNorAnythingElse(_ claim: String, _ json: String) {
        #expect(throws: TokenRefusal.malformed(.claimType)) {
            try JSONWebToken(Self.token(#"{"alg":"HS256"}"#, #"{"\#(claim)":\#(json)}"#))
        }
    }

    @Test(arguments: ["null", "[]", #"["exp"]"#, "{}", "false", "0", #""""#])
    func aCritHeaderOfAnyValueIsRefused(_ json: String) {
        #expect(throws: TokenRefusal.critical) {
            try JSONWebToken(Self.token(#"{"alg":"HS256","crit":\#(json)}"#, #"{"exp":"not checked first"}"#))
        }
    }

    @Test(arguments: [#"{}"#, #"{"alg":null}"#, #"{"alg":256}"#, #"{"alg":["HS256"]}"#, #"{"ALG":"HS256"}"#])
    func anAlgorithmThatIsNoStringIsMissing(_ header: String) {
        #expect(throws: TokenRefusal.malformed(.missingAlgorithm)) { try JSONWebToken(Self.token(header, "{}")) }
    }

    @Test(arguments: [
        (#"{"alg":"HS256"}"#, #"{"iss":null}"#, TokenRefusal.malformed(.claimType)),
        (#"{"alg":"HS256","kid":7}"#, "{}", .malformed(.claimType)),
        (#"{"alg":"HS256","kid":null}"#, "{}", .malformed(.claimType)),
        (#"{"alg":"HS256"}"#, #"{"sub":true}"#, .malformed(.claimType)),
        (#"{"alg":"HS256"}"#, #"{"aud":{}}"#, .malformed(.claimType)),
        (#"{"alg":"HS256"}"#, #"{"aud":["a",null]}"#, .malformed(.claimType)),
        (#"{"alg":"HS256"}"#, #"{"exp":1e400}"#, .malformed(.claimsJSON)),
        (#"{"alg":"HS256","kid":"\ud800"}"#, "{}", .malformed(.headerJSON)),
        ("5", "{}", .malformed(.headerJSON)), ("null", "{}", .malformed(.headerJSON)),
        (#"{"alg":"HS256""#, "{}", .malformed(.headerJSON)), (#"{"alg":"HS256"}"#, #""{}""#, .malformed(.claimsJSON)),
        (#"{"alg":"HS256"}"#, "", .malformed(.claimsJSON)), ("[]", "[]", .malformed(.headerJSON)),
    ])
    func eachPartAndClaimIsJudgedAsBefore(_ header: String, _ claims: String, _ refusal: TokenRefusal) {
        #expect(throws: refusal) { try JSONWebToken(Self.token(header, claims)) }
    }

    @Test(
        arguments: [
            (#"{}"#, []), (#"{"aud":"a"}"#, ["a"]), (#"{"aud":[]}"#, []), (#"{"aud":["a","b"]}"#, ["a", "b"]),
        ] as [(String, [String])])
    func anAudienceIsAStringOrAnArrayOfStrings(_ claims: String, _ audiences: [String]) throws {
        #expect(try JSONWebToken(Self.token(#"{"alg":"HS256"}"#, claims)).audiences == audiences)
    }

    /// JSONDecoder accepts 512 levels, as JSONSerialization did; a claim the proxy reads is
    /// judged by its kind alone, so the deepest costs a few tries, not one per level.
    @Test func nestingIsReadToJSONDecodersLimit() throws {
        let arrays = { (depth: Int) in String(repeating: "[", count: depth) + String(repeating: "]", count: depth) }
        #expect(throws: TokenRefusal.malformed(.claimType)) {
            try JSONWebToken(Self.token(#"{"alg":"HS256"}"#, #"{"aud":\#(arrays(511))}"#))
        }
        #expect(try JSONWebToken(Self.token(#"{"alg":"HS256"}"#, #"{"x":\#(arrays(511)),"sub":"u"}"#)).subject == "u")
        #expect(throws: TokenRefusal.malformed(.claimsJSON)) {
            try JSONWebToken(Self.token(#"{"alg":"HS256"}"#, #"{"x":\#(arrays(512))}"#))
        }
    }

    /// RFC 7515 §5.2: a recipient may refuse a member given twice, and parsers disagree on
    /// which one counts (JSONDecoder the first, JSONSerialization the last).
    /// The refusal names the member given twice, not "not a JSON object": the text is JSON.
    @Test(arguments: [
        (#"{"alg":"HS256","alg":"none"}"#, "{}", TokenRefusal.malformed(.headerMemberTwice("alg"))),
        (#"{"alg":"HS256","kid":"a","kid":"b"}"#, "{}", .malformed(.headerMemberTwice("kid"))),
        (#"{"alg":"HS256","crit":null,"crit":null}"#, "{}", .malformed(.headerMemberTwice("crit"))),
        (#"{"alg":"HS256","typ":"JWT","typ":"at+jwt"}"#, "{}", .malformed(.headerMemberTwice("typ"))),
        (#"{"alg":"HS256"}"#, #"{"sub":"a","sub":"b"}"#, .malformed(.claimTwice("sub"))),
        (#"{"alg":"HS256"}"#, #"{"sub":"a","\u0073ub":"b"}"#, .malformed(.claimTwice("sub"))),
        (#"{"alg":"HS256"}"#, #"{"exp":1,"exp":"x"}"#, .malformed(.claimTwice("exp"))),
        (#"{"alg":"HS256"}"#, #"{"aud":"a","aud":["b"]}"#, .malformed(.claimTwice("aud"))),
    ])
    func aMemberTheVerifierReadsGivenTwiceIsRefused(_ header: String, _ claims: String, _ refusal: TokenRefusal) {
        #expect(throws: refusal) { try JSONWebToken(Self.token(header, claims)) }
    }

    /// What each shape's refusal tells the developer: the fault itself, and no retry where
    /// asking again cannot help.
    @Test(arguments: [
        (TokenRefusal.malformed(.claimTwice("sub")), "its claims give the member sub twice"),
        (.malformed(.headerMemberTwice("kid")), "its header gives the member kid twice"),
        (.malformed(.missingKeyID), "its header has no kid"),
        (.malformed(.claimsJSON), "its claims are not a JSON object"),
    ])
    func aMalformedTokensMessageSaysWhatIsWrongWithoutARetry(_ refusal: TokenRefusal, _ says: String) {
        #expect(refusal.message.contains(says), "\(refusal.message)")
        #expect(!refusal.message.contains("retry"), "\(refusal.message)")
        if says.contains("twice") { #expect(!refusal.message.contains("not a JSON object")) }
    }

    @Test func aMemberTheVerifierDoesNotReadMayBeGivenTwice() throws {
        let jwt = try JSONWebToken(Self.token(#"{"alg":"HS256","cty":"JWT","cty":"x"}"#, #"{"x":1,"x":"y"}"#))
        #expect(jwt.algorithm == "HS256")
    }

    /// The whole of each part is judged as RFC 8259 has it, members the verifier does not
    /// read included; JSONDecoder alone would read their strings and numbers only on demand,
    /// and take UTF-16, a byte order mark and trailing commas.
    @Test func eachPartMustBeStrictJSONToTheLastByte() {
        let header = Array(#"{"alg":"HS256"}"#.utf8)
        let claims = { (bytes: [UInt8]) in Array((Base64URL.encode(header) + "." + Base64URL.encode(bytes) + ".").utf8)
        }
        let refused: [[UInt8]] = [
            Array(#"{"x":"\ud800"}"#.utf8), Array(#"{"x":01}"#.utf8), Array(#"{"x":"a\x"}"#.utf8),
            Array(#"{"x":""#.utf8) + [0xFF] + Array(#""}"#.utf8), Array("{\"x\":\"\u{01}\"}".utf8),
            [0xEF, 0xBB, 0xBF] + Array("{}".utf8), Array(#"{"sub":"u",}"#.utf8), Array(#"{"sub":["u",]}"#.utf8),
            Array("{\"sub\":\"u\"}".utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }),
        ]
        for bytes in refused {
            #expect(throws: TokenRefusal.malformed(.claimsJSON)) { try JSONWebToken(claims(bytes)) }
        }
        #expect(throws: TokenRefusal.malformed(.headerJSON)) {
            try JSONWebToken(Self.token(#"{"alg":"HS256","crit":"\ud800"}"#, "{}"))
        }
    }

    @Test func aTokenOverTheSizeLimitIsRefusedBeforeItIsRead() throws {
        let padding = String(repeating: "a", count: TokenRefusal.maxTokenBytes)
        #expect(throws: TokenRefusal.malformed(.tooLong)) {
            try JSONWebToken(Self.token(#"{"alg":"HS256"}"#, #"{"x":"\#(padding)"}"#))
        }
        let fits = String(repeating: "a", count: TokenRefusal.maxTokenBytes / 2)
        #expect(try JSONWebToken(Self.token(#"{"alg":"HS256"}"#, #"{"x":"\#(fits)"}"#)).algorithm == "HS256")
    }

    @Test func aKeySetRefusesJunkAndKeepsOnlyVerificationKeys() throws {
        #expect(throws: JSONWebKeySet.Problem.notJSON) { try JSONWebKeySet(parsing: Array("[]".utf8)) }
        #expect(throws: JSONWebKeySet.Problem.noKeysArray) { try JSONWebKeySet(parsing: Array("{}".utf8)) }
        #expect(throws: JSONWebKeySet.Problem.tooLarge) {
            try JSONWebKeySet(parsing: [UInt8](repeating: 0x20, count: 256 * 1024 + 1))
        }
        let set = try JSONWebKeySet(
            parsing: Array(
                Self.appendixKeySet.replacingOccurrences(of: #""kid":"a3","#, with: #""kid":"a3","alg":"RS256","#).utf8)
        )
        #expect(set.keys.keys.sorted() == ["a2"], "an EC key declared for RS256 is skipped")
    }
}
