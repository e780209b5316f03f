import AmodbCrypto
import Testing

/// RS256 and ES256 as libcrypto verifies them: RFC 7515's appendix examples, keys made
/// here, and what a key refuses.
@Suite struct SignatureTests {
    /// RFC 7515 Appendix A: the JWS Signing Input every example signs (header . payload).
    static func signingInput(header: String) -> [UInt8] {
        Array((header + "." + RFC7515.payload).utf8)
    }

    @Test func verifiesRFC7515AppendixA1HS256() throws {
        let key = try #require(Base64URL.decode(RFC7515.hs256Key))
        let signature = try #require(Base64URL.decode(RFC7515.hs256Signature))
        let input = Self.signingInput(header: RFC7515.hs256Header)
        #expect(HMACSHA256(key: key).isAuthenticationCode(signature, of: input))
        #expect(Base64URL.encode(HMACSHA256(key: key).authenticationCode(for: input)) == RFC7515.hs256Signature)
    }

    @Test func verifiesRFC7515AppendixA2RS256() throws {
        let key = try PublicKey(
            rsaModulus: #require(Base64URL.decode(RFC7515.rsaN)), exponent: #require(Base64URL.decode("AQAB")))
        #expect(key.algorithm == .rs256)
        let signature = try #require(Base64URL.decode(RFC7515.rs256Signature))
        #expect(key.isValidSignature(signature, of: Self.signingInput(header: RFC7515.rs256Header)))
        var tampered = signature
        tampered[10] ^= 1
        #expect(!key.isValidSignature(tampered, of: Self.signingInput(header: RFC7515.rs256Header)))
        #expect(
            !key.isValidSignature(signature, of: Self.signingInput(header: RFC7515.es256Header)),
            "another signing input")
    }

    @Test func verifiesRFC7515AppendixA3ES256() throws {
        let key = try PublicKey(
            p256X: #require(Base64URL.decode(RFC7515.ecX)), y: #require(Base64URL.decode(RFC7515.ecY)))
        #expect(key.algorithm == .es256)
        let signature = try #require(Base64URL.decode(RFC7515.es256Signature))
        #expect(signature.count == 64, "r‖s, as JWS carries it")
        #expect(key.isValidSignature(signature, of: Self.signingInput(header: RFC7515.es256Header)))
        var tampered = signature
        tampered[40] ^= 0x80
        #expect(!key.isValidSignature(tampered, of: Self.signingInput(header: RFC7515.es256Header)))
        #expect(
            !key.isValidSignature(Array(signature.dropLast()), of: Self.signingInput(header: RFC7515.es256Header)),
            "63 bytes")
    }

    @Test(arguments: [SignatureAlgorithm.rs256, .es256])
    func aMadeKeySignsWhatItsPublicParametersVerify(_ algorithm: SignatureAlgorithm) throws {
        let key = algorithm == .rs256 ? try SigningKey.rsa() : try SigningKey.p256()
        let message = Array("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxIn0".utf8)
        let signature = try key.sign(message)
        let parameters = key.publicParameters
        let rebuilt =
            algorithm == .rs256
            ? try PublicKey(
                rsaModulus: #require(parameters["n"].flatMap { Base64URL.decode($0) }),
                exponent: #require(parameters["e"].flatMap { Base64URL.decode($0) }))
            : try PublicKey(
                p256X: #require(parameters["x"].flatMap { Base64URL.decode($0) }),
                y: #require(parameters["y"].flatMap { Base64URL.decode($0) }))
        #expect(rebuilt.isValidSignature(signature, of: message))
        #expect(!rebuilt.isValidSignature(signature, of: message + [0x2E]))
        let other = algorithm == .rs256 ? try SigningKey.rsa() : try SigningKey.p256()
        #expect(!other.publicKey.isValidSignature(signature, of: message), "another key of the same kind")
        if algorithm == .es256 { #expect(signature.count == 64) } else { #expect(signature.count == 256) }
    }

    @Test func refusesAPointOffTheCurve() throws {
        var y = try #require(Base64URL.decode(RFC7515.ecY))
        y[31] ^= 1
        #expect(throws: CryptoError.self) { try PublicKey(p256X: #require(Base64URL.decode(RFC7515.ecX)), y: y) }
        #expect(throws: CryptoError.self) { try PublicKey(p256X: [1, 2, 3], y: y) }
    }

    @Test func refusesAnRSAModulusUnder2048Bits() throws {
        let n = try #require(Base64URL.decode(RFC7515.rsaN))
        #expect(throws: CryptoError.self) { try PublicKey(rsaModulus: Array(n.prefix(128)), exponent: [1, 0, 1]) }
        #expect(throws: CryptoError.self) { try PublicKey(rsaModulus: n, exponent: []) }
    }

    @Test(arguments: ["a", "ab=", "a+b/", "a b", "QQ=", "QR", "abcde"])
    func base64URLRefusesWhatIsNotStrict(_ text: String) {
        #expect(Base64URL.decode(text) == nil)
    }

    @Test func base64URLRoundTrips() {
        for count in 0..<40 {
            let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 250) }
            #expect(Base64URL.decode(Base64URL.encode(bytes)) == bytes)
        }
        #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
        #expect(Base64URL.decode("QQ") == [0x41])
    }
}

/// RFC 7515 Appendix A's examples: the keys and signatures as published.
enum RFC7515 {
    /// The payload of A.1 to A.3: `{"iss":"joe",\r\n "exp":1300819380,\r\n "http://example.com/is_root":true}`.
    static let payload =
        "eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"

    static let hs256Header = "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9"
    static let hs256Key = "AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow"
    static let hs256Signature = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"

    static let rs256Header = "eyJhbGciOiJSUzI1NiJ9"
    static let rsaN =
        "ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4"
        + "qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pCgNMsD1W_YpRPEwOWvG6b32690r2j"
        + "Z47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7W"
        + "TBEMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK"
        + "-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ"
    static let rs256Signature =
        "cC4hiUPoj9Eetdgtv3hF80EGrhuB__dzERat0XF9g2VtQgr9PJbu3XOiZj5RZmh7AAuHIm"
        + "4Bh-0Qc_lF5YKt_O8W2Fp5jujGbds9uJdbF9CUAr7t1dnZcAcQjbKBYNX4BAynRFdiuB--"
        + "f_nZLgrnbyTyWzO75vRK5h6xBArLIARNPvkSjtQBMHlb1L07Qe7K0GarZRmB_eSN9383Lc"
        + "OLn6_dO--xi12jzDwusC-eOkHWEsqtFZESc6BfI7noOPqvhJ1phCnvWh6IeYI2w9QOYEUi"
        + "pUTI8np6LbgGY9Fs98rqVt5AXLIhWkWywlVmtVrBp0igcN_IoypGlUPQGe77Rw"

    static let es256Header = "eyJhbGciOiJFUzI1NiJ9"
    static let ecX = "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU"
    static let ecY = "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"
    static let es256Signature = "DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q"
}
