/// An X.509 certificate (RFC 5280) read by libcrypto from DER, held as its `X509` and
/// freed when the last copy goes. Only what a verifier reads of one is offered: its
/// extensions by OID and its P-256 public key; `TrustedRoots` checks its chain.
public struct X509Certificate: Sendable {
    /// The largest DER certificate read, in bytes: Apple's App Attest certificates are under
    /// 1 KiB, and a larger one only costs parsing time.
    public static let maximumBytes = 16 * 1024

    /// The DER bytes it was read from.
    public let der: [UInt8]
    let box: CertificateBox

    /// The certificate `der` encodes, exactly: trailing bytes are refused, as is anything
    /// libcrypto cannot read as a certificate or longer than `maximumBytes`.
    public init(der: [UInt8]) throws(CryptoError) {
        guard !der.isEmpty, der.count <= Self.maximumBytes else {
            throw CryptoError("a DER certificate of 1 to \(Self.maximumBytes) bytes")
        }
        var consumed = 0
        let certificate = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor = buffer.baseAddress
            let certificate = libcrypto.d2i_X509(nil, &cursor, buffer.count)
            if let cursor, let base = buffer.baseAddress { consumed = cursor - base }
            return certificate
        }
        guard let certificate else {
            libcrypto.ERR_clear_error()
            throw CryptoError("libcrypto could not read a DER certificate")
        }
        guard consumed == der.count else {
            libcrypto.X509_free(certificate)
            throw CryptoError("a DER certificate followed by other bytes")
        }
        self.der = der
        box = CertificateBox(certificate)
    }

    init(box: CertificateBox) throws(CryptoError) {
        let length = libcrypto.i2d_X509(box.certificate, nil)
        guard length > 0 else {
            libcrypto.ERR_clear_error()
            throw CryptoError("libcrypto could not encode a certificate")
        }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return libcrypto.i2d_X509(box.certificate, &cursor)
        }
        guard written == length else { throw CryptoError("libcrypto could not encode a certificate") }
        self.der = der
        self.box = box
    }

    /// The value of the extension `oid` (dotted decimal, such as `1.2.840.113635.100.8.2`):
    /// the content of its `extnValue` OCTET STRING, or `nil` when the certificate has none.
    /// A certificate that carries the extension twice is refused (RFC 5280 §4.2: "MUST NOT
    /// include more than one instance"), so no reader can be shown the other one.
    public func extensionValue(oid: String) throws(CryptoError) -> [UInt8]? {
        guard let object = libcrypto.OBJ_txt2obj(oid, 1) else {
            libcrypto.ERR_clear_error()
            throw CryptoError("\(oid) is not an object identifier")
        }
        defer { libcrypto.ASN1_OBJECT_free(object) }
        let index = libcrypto.X509_get_ext_by_OBJ(box.certificate, object, -1)
        guard index >= 0 else { return nil }
        guard libcrypto.X509_get_ext_by_OBJ(box.certificate, object, index) < 0 else {
            throw CryptoError("the certificate carries the extension \(oid) more than once")
        }
        guard let `extension` = libcrypto.X509_get_ext(box.certificate, index),
            let data = libcrypto.X509_EXTENSION_get_data(`extension`)
        else {
            throw CryptoError("libcrypto could not read the extension \(oid)")
        }
        let count = Int(libcrypto.ASN1_STRING_length(data))
        guard count > 0, let bytes = libcrypto.ASN1_STRING_get0_data(data) else { return [] }
        return Array(UnsafeBufferPointer(start: bytes, count: count))
    }

    /// The subject's public key as an uncompressed P-256 point (SEC 1 §2.3.3: `0x04 ‖ x ‖ y`,
    /// 65 bytes), or `nil` when the key is not on P-256. The point is rebuilt from its
    /// coordinates, so a certificate that wrote it compressed yields the same bytes.
    public var p256PublicKeyPoint: [UInt8]? {
        guard let pkey = libcrypto.X509_get0_pubkey(box.certificate) else {
            libcrypto.ERR_clear_error()
            return nil
        }
        guard libcrypto.EVP_PKEY_is_a(pkey, "EC") == 1, Self.groupName(of: pkey) == "prime256v1" else { return nil }
        guard let x = ECPoint.coordinate("qx", of: pkey), let y = ECPoint.coordinate("qy", of: pkey) else {
            return nil
        }
        return [0x04] + x + y
    }

    /// The name of an EC key's curve, as libcrypto calls it (`prime256v1` for P-256).
    private static func groupName(of pkey: OpaquePointer) -> String? {
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        let found = name.withUnsafeMutableBufferPointer {
            libcrypto.EVP_PKEY_get_group_name(pkey, $0.baseAddress, $0.count, &length)
        }
        guard found == 1, length < name.count else {
            libcrypto.ERR_clear_error()
            return nil
        }
        return String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// A P-256 key's coordinates as libcrypto hands them out.
enum ECPoint {
    /// Bytes of each coordinate on P-256.
    static let coordinateBytes = 32

    /// The coordinate `name` (`qx`, `qy`) of an EC key, left-padded to 32 bytes.
    static func coordinate(_ name: StaticString, of pkey: OpaquePointer) -> [UInt8]? {
        var number: OpaquePointer?
        let key = UnsafeRawPointer(name.utf8Start).assumingMemoryBound(to: CChar.self)
        guard libcrypto.EVP_PKEY_get_bn_param(pkey, key, &number) == 1, let number else {
            libcrypto.ERR_clear_error()
            return nil
        }
        defer { libcrypto.BN_free(number) }
        var bytes = [UInt8](repeating: 0, count: coordinateBytes)
        let written = bytes.withUnsafeMutableBufferPointer {
            libcrypto.BN_bn2binpad(number, $0.baseAddress, Int32(coordinateBytes))
        }
        return written == Int32(coordinateBytes) ? bytes : nil
    }
}

/// Owns one `X509`. A certificate is only read once made, and libcrypto guards the one
/// thing reading it may write (the cache of its decoded extensions) with its own lock, so
/// copies may be read from several threads at once.
final class CertificateBox: @unchecked Sendable {
    let certificate: OpaquePointer

    init(_ certificate: OpaquePointer) {
        self.certificate = certificate
    }

    deinit {
        libcrypto.X509_free(certificate)
    }
}
