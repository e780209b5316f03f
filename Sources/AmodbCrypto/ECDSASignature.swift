/// ECDSA signatures in the two encodings that meet here: JSON Web Signatures carry P-256's
/// as `r‖s`, 32 bytes each (RFC 7518 §3.4), and libcrypto reads and writes DER
/// `ECDSA-Sig-Value` (RFC 3279 §2.2.3).
enum ECDSASignature {
    /// Bytes of each of `r` and `s` on P-256.
    static let componentBytes = 32

    /// The DER encoding of a raw `r‖s`, or `nil` when it is not 64 bytes.
    static func der(fromRaw raw: [UInt8]) -> [UInt8]? {
        guard raw.count == 2 * componentBytes, let signature = libcrypto.ECDSA_SIG_new() else { return nil }
        defer { libcrypto.ECDSA_SIG_free(signature) }
        let r = raw[..<componentBytes].withUnsafeBufferPointer {
            libcrypto.BN_bin2bn($0.baseAddress, Int32(componentBytes), nil)
        }
        let s = raw[componentBytes...].withUnsafeBufferPointer {
            libcrypto.BN_bin2bn($0.baseAddress, Int32(componentBytes), nil)
        }
        guard let r, let s else {
            libcrypto.BN_free(r)
            libcrypto.BN_free(s)
            return nil
        }
        // ECDSA_SIG_set0 takes ownership of r and s.
        guard libcrypto.ECDSA_SIG_set0(signature, r, s) == 1 else {
            libcrypto.BN_free(r)
            libcrypto.BN_free(s)
            return nil
        }
        let length = libcrypto.i2d_ECDSA_SIG(signature, nil)
        guard length > 0 else { return nil }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return libcrypto.i2d_ECDSA_SIG(signature, &cursor)
        }
        return written == length ? der : nil
    }

    /// The raw `r‖s` of a DER signature, or `nil` when it does not parse.
    static func raw(fromDER der: [UInt8]) -> [UInt8]? {
        let signature = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor = buffer.baseAddress
            return libcrypto.d2i_ECDSA_SIG(nil, &cursor, buffer.count)
        }
        guard let signature else { return nil }
        defer { libcrypto.ECDSA_SIG_free(signature) }
        var raw = [UInt8](repeating: 0, count: 2 * componentBytes)
        guard let r = libcrypto.ECDSA_SIG_get0_r(signature), let s = libcrypto.ECDSA_SIG_get0_s(signature) else {
            return nil
        }
        let done = raw.withUnsafeMutableBufferPointer { buffer in
            libcrypto.BN_bn2binpad(r, buffer.baseAddress, Int32(componentBytes)) == Int32(componentBytes)
                && libcrypto.BN_bn2binpad(s, buffer.baseAddress! + componentBytes, Int32(componentBytes))
                    == Int32(componentBytes)
        }
        return done ? raw : nil
    }
}
