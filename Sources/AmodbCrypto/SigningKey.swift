/// A private key made by libcrypto that signs as a JSON Web Signature's issuer would
/// (RS256, ES256), and hands out its public half as JSON Web Key parameters. The proxy
/// only verifies; tests make their keys and tokens with this.
public struct SigningKey: Sendable {
    /// The algorithm it signs with.
    public let algorithm: SignatureAlgorithm
    let key: KeyBox

    /// A fresh RSA key of `bits` (RS256).
    public static func rsa(bits: Int = 2048) throws(CryptoError) -> SigningKey {
        try generate(.rs256) { context in libcrypto.EVP_PKEY_CTX_set_rsa_keygen_bits(context, Int32(bits)) == 1 }
    }

    /// A fresh P-256 key (ES256).
    public static func p256() throws(CryptoError) -> SigningKey {
        try generate(.es256) { context in libcrypto.EVP_PKEY_CTX_set_group_name(context, "P-256") == 1 }
    }

    private static func generate(_ algorithm: SignatureAlgorithm, _ configure: (OpaquePointer) -> Bool)
        throws(CryptoError) -> SigningKey
    {
        let type = algorithm == .rs256 ? "RSA" : "EC"
        guard let context = libcrypto.EVP_PKEY_CTX_new_from_name(nil, type, nil) else {
            throw CryptoError("libcrypto has no \(type) keys")
        }
        defer { libcrypto.EVP_PKEY_CTX_free(context) }
        var pkey: OpaquePointer?
        guard libcrypto.EVP_PKEY_keygen_init(context) == 1, configure(context),
            libcrypto.EVP_PKEY_generate(context, &pkey) == 1, let pkey
        else {
            throw CryptoError("libcrypto could not generate an \(type) key")
        }
        return SigningKey(algorithm: algorithm, key: KeyBox(pkey))
    }

    private init(algorithm: SignatureAlgorithm, key: KeyBox) {
        self.algorithm = algorithm
        self.key = key
    }

    /// The public half, for verifying.
    public var publicKey: PublicKey { PublicKey(algorithm: algorithm, box: key) }

    /// The public key's JSON Web Key parameters, base64url (RFC 7518 §6): `n` and `e` for
    /// RSA, `crv`, `x` and `y` for P-256, with `kty`.
    public var publicParameters: [String: String] {
        switch algorithm {
        case .rs256:
            [
                "kty": "RSA", "n": Base64URL.encode(number("n", padded: nil)),
                "e": Base64URL.encode(number("e", padded: nil)),
            ]
        case .es256:
            [
                "kty": "EC", "crv": "P-256", "x": Base64URL.encode(number("qx", padded: 32)),
                "y": Base64URL.encode(number("qy", padded: 32)),
            ]
        }
    }

    /// A key parameter as unsigned big-endian bytes, left-padded to `padded` bytes if given.
    private func number(_ name: String, padded: Int?) -> [UInt8] {
        var number: OpaquePointer?
        guard libcrypto.EVP_PKEY_get_bn_param(key.pkey, name, &number) == 1, let number else { return [] }
        defer { libcrypto.BN_free(number) }
        let count = padded ?? Int((libcrypto.BN_num_bits(number) + 7) / 8)
        var bytes = [UInt8](repeating: 0, count: count)
        let written = bytes.withUnsafeMutableBufferPointer {
            libcrypto.BN_bn2binpad(number, $0.baseAddress, Int32(count))
        }
        return written == count ? bytes : []
    }

    /// The public half of a P-256 key as an uncompressed point (SEC 1 §2.3.3: `0x04 ‖ x ‖ y`,
    /// 65 bytes), as App Attest names and hashes a key; `nil` for an RSA key.
    public var p256PublicKeyPoint: [UInt8]? {
        guard algorithm == .es256, let x = ECPoint.coordinate("qx", of: key.pkey),
            let y = ECPoint.coordinate("qy", of: key.pkey)
        else { return nil }
        return [0x04] + x + y
    }

    /// The signature of `message`: PKCS #1 v1.5 for RS256, `r‖s` for ES256.
    public func sign(_ message: [UInt8]) throws(CryptoError) -> [UInt8] {
        let signature = try signEncoded(message)
        guard algorithm == .es256 else { return signature }
        guard let raw = ECDSASignature.raw(fromDER: signature) else {
            throw CryptoError("libcrypto wrote an ECDSA signature that does not parse")
        }
        return raw
    }

    /// The signature of `message` as libcrypto writes it: for ES256 a DER `ECDSA-Sig-Value`
    /// (RFC 3279 §2.2.3), as App Attest assertions and X.509 carry it; for RS256 the same
    /// bytes `sign` returns.
    public func derSignature(_ message: [UInt8]) throws(CryptoError) -> [UInt8] {
        try signEncoded(message)
    }

    private func signEncoded(_ message: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard let context = libcrypto.EVP_MD_CTX_new() else {
            throw CryptoError("libcrypto could not make a digest context")
        }
        defer { libcrypto.EVP_MD_CTX_free(context) }
        guard libcrypto.EVP_DigestSignInit(context, nil, libcrypto.EVP_sha256(), nil, key.pkey) == 1 else {
            throw CryptoError("libcrypto could not start signing")
        }
        var length = 0
        guard
            message.withUnsafeBufferPointer({
                libcrypto.EVP_DigestSign(context, nil, &length, $0.baseAddress, $0.count)
            }) == 1
        else {
            throw CryptoError("libcrypto could not size a signature")
        }
        var signature = [UInt8](repeating: 0, count: length)
        let signed = signature.withUnsafeMutableBufferPointer { out in
            message.withUnsafeBufferPointer {
                libcrypto.EVP_DigestSign(context, out.baseAddress, &length, $0.baseAddress, $0.count)
            }
        }
        guard signed == 1 else { throw CryptoError("libcrypto could not sign") }
        signature.removeLast(signature.count - length)
        return signature
    }
}
