/// A public key that verifies signatures of one algorithm (`SignatureAlgorithm`), built
/// from a JSON Web Key's parameters (RFC 7518 §6) with OpenSSL 3's parameter API and held
/// as libcrypto's `EVP_PKEY`, freed when the last copy goes.
public struct PublicKey: Sendable {
    /// The one algorithm this key verifies.
    public let algorithm: SignatureAlgorithm
    private let key: KeyBox

    /// The smallest RSA modulus accepted, in bits (RFC 7518 §3.3: 2048 or larger).
    public static let minimumRSABits = 2048
    /// The largest RSA modulus accepted, in bits: larger keys only cost verification time.
    public static let maximumRSABits = 8192

    /// An RS256 key from the modulus `n` and public exponent `e` (big-endian, unsigned).
    /// The exponent must be odd and at least 3: with `e` = 1 a signature is its own
    /// encoded message, so anyone could forge one, and an even `e` is no RSA key.
    public init(rsaModulus n: [UInt8], exponent e: [UInt8]) throws(CryptoError) {
        let modulus = n.drop { $0 == 0 }
        let exponent = e.drop { $0 == 0 }
        let bits = Self.bitCount(of: n)
        guard (Self.minimumRSABits...Self.maximumRSABits).contains(bits), Self.isAcceptableRSAExponent(e) else {
            throw CryptoError(
                "an RSA public key needs a modulus of 2048 to 8192 bits and an odd exponent from 3 to 64 bits")
        }
        let made = ParameterBuilder.build { builder in
            builder.push(number: Array(modulus), named: "n") && builder.push(number: Array(exponent), named: "e")
        }
        guard let made, let pkey = Self.publicKey(type: "RSA", parameters: made) else {
            throw CryptoError("libcrypto refused an RSA public key from n and e")
        }
        algorithm = .rs256
        key = KeyBox(pkey)
    }

    /// The bits of an unsigned big-endian number, leading zeros not counted.
    public static func bitCount(of number: [UInt8]) -> Int {
        let significant = number.drop { $0 == 0 }
        return significant.count * 8 - (significant.first.map { $0.leadingZeroBitCount } ?? 8)
    }

    /// Whether an RSA public exponent (unsigned big-endian) is odd, at least 3 and at most
    /// 64 bits.
    public static func isAcceptableRSAExponent(_ exponent: [UInt8]) -> Bool {
        let significant = exponent.drop { $0 == 0 }
        guard let last = significant.last, significant.count <= 8 else { return false }
        return last & 1 == 1 && (significant.count > 1 || last >= 3)
    }

    /// An RSA public exponent in decimal when it fits 64 bits (`1`, `65537`), else its size.
    public static func exponentDescription(_ exponent: [UInt8]) -> String {
        let significant = exponent.drop { $0 == 0 }
        guard significant.count <= 8 else { return "a \(bitCount(of: exponent))-bit number" }
        return String(significant.reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
    }

    /// An ES256 key from the P-256 point's affine coordinates `x` and `y` (32 bytes each).
    /// A point not on the curve is refused.
    public init(p256X x: [UInt8], y: [UInt8]) throws(CryptoError) {
        guard x.count == 32, y.count == 32 else {
            throw CryptoError("a P-256 public key needs x and y of 32 bytes each")
        }
        let point = [0x04] + x + y  // uncompressed point (SEC 1 §2.3.3)
        let made = ParameterBuilder.build { builder in
            builder.push(text: "P-256", named: "group") && builder.push(octets: point, named: "pub")
        }
        guard let made, let pkey = Self.publicKey(type: "EC", parameters: made) else {
            throw CryptoError("libcrypto refused a P-256 public key from x and y")
        }
        // EVP_PKEY_fromdata does not check that the point is on the curve; this does.
        guard Self.checksPublicKey(pkey) else {
            libcrypto.EVP_PKEY_free(pkey)
            throw CryptoError("the P-256 point (x, y) is not on the curve")
        }
        algorithm = .es256
        key = KeyBox(pkey)
    }

    /// An ES256 key from an uncompressed P-256 point (SEC 1 §2.3.3: `0x04 ‖ x ‖ y`, 65
    /// bytes), as X.509 and App Attest carry one. A point not on the curve is refused.
    public init(p256Point point: [UInt8]) throws(CryptoError) {
        guard point.count == 1 + 2 * ECPoint.coordinateBytes, point.first == 0x04 else {
            throw CryptoError("an uncompressed P-256 point needs 65 bytes, the first 0x04")
        }
        try self.init(p256X: Array(point[1...32]), y: Array(point[33...64]))
    }

    init(algorithm: SignatureAlgorithm, box: KeyBox) {
        self.algorithm = algorithm
        key = box
    }

    /// Whether `signature` is this key's signature of `message` under its algorithm; for
    /// ES256 the signature is `r‖s` (64 bytes), as JSON Web Signatures carry it.
    public func isValidSignature(_ signature: [UInt8], of message: [UInt8]) -> Bool {
        let encoded: [UInt8]
        switch algorithm {
        case .rs256: encoded = signature
        case .es256:
            guard let der = ECDSASignature.der(fromRaw: signature) else { return false }
            encoded = der
        }
        return isValid(encoded: encoded, of: message)
    }

    /// Whether `signature` is this key's signature of `message`, in the encoding libcrypto
    /// reads: for ES256 a DER `ECDSA-Sig-Value` (RFC 3279 §2.2.3), as App Attest assertions
    /// carry it. libcrypto refuses a DER signature that is not the one encoding of its `r`
    /// and `s` (it re-encodes and compares), so no other bytes pass for the same signature.
    /// A refused signature's errors are cleared from the thread's libcrypto error queue,
    /// where a later caller on the thread (libssl) would otherwise find them.
    public func isValidSignature(der signature: [UInt8], of message: [UInt8]) -> Bool {
        let valid = isValid(encoded: signature, of: message)
        if !valid { libcrypto.ERR_clear_error() }
        return valid
    }

    private func isValid(encoded: [UInt8], of message: [UInt8]) -> Bool {
        guard let context = libcrypto.EVP_MD_CTX_new() else { return false }
        defer { libcrypto.EVP_MD_CTX_free(context) }
        guard libcrypto.EVP_DigestVerifyInit(context, nil, libcrypto.EVP_sha256(), nil, key.pkey) == 1 else {
            return false
        }
        return encoded.withUnsafeBufferPointer { signature in
            message.withUnsafeBufferPointer { message in
                libcrypto.EVP_DigestVerify(
                    context, signature.baseAddress, signature.count, message.baseAddress, message.count)
                    == 1
            }
        }
    }

    /// A public key of `type` (`RSA`, `EC`) from built parameters, which it frees.
    private static func publicKey(type: String, parameters: OpaquePointer) -> OpaquePointer? {
        defer { libcrypto.OSSL_PARAM_free(parameters) }
        guard let context = libcrypto.EVP_PKEY_CTX_new_from_name(nil, type, nil) else { return nil }
        defer { libcrypto.EVP_PKEY_CTX_free(context) }
        var pkey: OpaquePointer?
        guard libcrypto.EVP_PKEY_fromdata_init(context) == 1,
            libcrypto.EVP_PKEY_fromdata(context, &pkey, LibCrypto.publicKeySelection, parameters) == 1
        else { return nil }
        return pkey
    }

    /// Whether libcrypto finds the public key valid (for EC: the point is on the curve).
    private static func checksPublicKey(_ pkey: OpaquePointer) -> Bool {
        guard let context = libcrypto.EVP_PKEY_CTX_new_from_pkey(nil, pkey, nil) else { return false }
        defer { libcrypto.EVP_PKEY_CTX_free(context) }
        return libcrypto.EVP_PKEY_public_check(context) == 1
    }
}

/// Owns one `EVP_PKEY`. libcrypto's keys are reference-counted and safe to use for
/// verification from several threads at once, which is all that is done with them.
final class KeyBox: @unchecked Sendable {
    let pkey: OpaquePointer

    init(_ pkey: OpaquePointer) {
        self.pkey = pkey
    }

    deinit {
        libcrypto.EVP_PKEY_free(pkey)
    }
}

/// OpenSSL 3's `OSSL_PARAM_BLD`, for the few parameters a public key takes. The builder
/// keeps pointers to the names and values pushed until it builds, so names are static
/// strings and values are copies it owns until then.
struct ParameterBuilder {
    private let builder: OpaquePointer
    /// Numbers pushed, freed after building.
    private var numbers: [OpaquePointer] = []
    /// Copies of octet strings pushed, freed after building.
    private var buffers: [UnsafeMutableRawBufferPointer] = []

    /// The parameters `push` adds, built; `nil` when a push or the build failed.
    static func build(_ push: (inout ParameterBuilder) -> Bool) -> OpaquePointer? {
        guard let raw = libcrypto.OSSL_PARAM_BLD_new() else { return nil }
        var builder = ParameterBuilder(builder: raw)
        defer {
            builder.numbers.forEach { libcrypto.BN_free($0) }
            builder.buffers.forEach { $0.deallocate() }
            libcrypto.OSSL_PARAM_BLD_free(raw)
        }
        guard push(&builder) else { return nil }
        return libcrypto.OSSL_PARAM_BLD_to_param(raw)
    }

    private init(builder: OpaquePointer) {
        self.builder = builder
    }

    /// Pushes an unsigned big-endian number.
    mutating func push(number bytes: [UInt8], named name: StaticString) -> Bool {
        guard let number = bytes.withUnsafeBufferPointer({ libcrypto.BN_bin2bn($0.baseAddress, Int32($0.count), nil) })
        else {
            return false
        }
        numbers.append(number)
        return libcrypto.OSSL_PARAM_BLD_push_BN(builder, Self.cString(name), number) == 1
    }

    /// Pushes a UTF-8 string.
    func push(text: StaticString, named name: StaticString) -> Bool {
        libcrypto.OSSL_PARAM_BLD_push_utf8_string(builder, Self.cString(name), Self.cString(text), 0) == 1
    }

    /// Pushes an octet string.
    mutating func push(octets: [UInt8], named name: StaticString) -> Bool {
        let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, octets.count), alignment: 1)
        buffers.append(copy)
        copy.copyBytes(from: octets)
        return libcrypto.OSSL_PARAM_BLD_push_octet_string(builder, Self.cString(name), copy.baseAddress, octets.count)
            == 1
    }

    /// A static string's bytes as a C string: static strings written as literals end in NUL.
    private static func cString(_ text: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
    }
}
