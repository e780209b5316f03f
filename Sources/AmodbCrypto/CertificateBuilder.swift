/// Issues X.509 v3 certificates with libcrypto, for tests that need a chain of their own
/// (a root, an intermediate, a leaf carrying an extension they choose). The proxy never
/// issues certificates; this exists so that what it verifies can be made here, offline.
package struct CertificateBuilder {
    /// The subject's common name (`CN`), its only name attribute.
    package var commonName: String
    /// The serial number, unique among the certificates one issuer signs.
    package var serialNumber: Int
    /// The first second it is valid, in seconds since 1970.
    package var notBefore: Int
    /// The last second it is valid, in seconds since 1970.
    package var notAfter: Int
    /// Whether it may sign certificates: a critical basic constraints `CA:TRUE` and key usage
    /// `keyCertSign, cRLSign`; otherwise a critical key usage `digitalSignature`.
    package var isAuthority: Bool
    /// Further extensions, each as its OID (dotted decimal), criticality and DER value.
    package var extensions: [(oid: String, isCritical: Bool, value: [UInt8])]

    /// A certificate for `commonName`, valid from `notBefore` to `notAfter`, with no
    /// further extensions.
    package init(commonName: String, serialNumber: Int, notBefore: Int, notAfter: Int, isAuthority: Bool) {
        self.commonName = commonName
        self.serialNumber = serialNumber
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.isAuthority = isAuthority
        extensions = []
    }

    /// The certificate of `subjectKey`'s public half, signed (ECDSA or RSA with SHA-256) by
    /// `issuer`'s key and naming `issuer`'s subject as its issuer; self-signed when `issuer`
    /// is `nil`.
    package func issue(for subjectKey: SigningKey, issuer: (certificate: X509Certificate, key: SigningKey)?)
        throws(CryptoError) -> X509Certificate
    {
        guard let certificate = libcrypto.X509_new() else {
            throw CryptoError("libcrypto could not make a certificate")
        }
        let box = CertificateBox(certificate)
        let issuerName =
            issuer.map { libcrypto.X509_get_subject_name($0.certificate.box.certificate) }
            ?? libcrypto.X509_get_subject_name(certificate)
        let signer = issuer?.key ?? subjectKey
        let made = withExtendedLifetime(issuer) {
            libcrypto.X509_set_version(certificate, 2) == 1  // v3
                && libcrypto.ASN1_INTEGER_set(libcrypto.X509_get_serialNumber(certificate), serialNumber) == 1
                && libcrypto.ASN1_TIME_set(libcrypto.X509_getm_notBefore(certificate), notBefore) != nil
                && libcrypto.ASN1_TIME_set(libcrypto.X509_getm_notAfter(certificate), notAfter) != nil
                && addCommonName(to: certificate)
                && libcrypto.X509_set_issuer_name(certificate, issuerName) == 1
                && libcrypto.X509_set_pubkey(certificate, subjectKey.key.pkey) == 1
                && addExtensions(to: certificate)
                && libcrypto.X509_sign(certificate, signer.key.pkey, libcrypto.EVP_sha256()) > 0
        }
        guard made else {
            libcrypto.ERR_clear_error()
            throw CryptoError("libcrypto could not issue a certificate for \(commonName)")
        }
        return try X509Certificate(box: box)
    }

    /// `MBSTRING_ASC`: the name entry's bytes are ASCII.
    private static let asciiString: Int32 = 0x1001

    private func addCommonName(to certificate: OpaquePointer) -> Bool {
        let name = libcrypto.X509_get_subject_name(certificate)
        let bytes = Array(commonName.utf8)
        return bytes.withUnsafeBufferPointer {
            libcrypto.X509_NAME_add_entry_by_txt(name, "CN", Self.asciiString, $0.baseAddress, Int32($0.count), -1, 0)
                == 1
        }
    }

    private func addExtensions(to certificate: OpaquePointer) -> Bool {
        // RFC 5280 §4.2.1.9 (basic constraints) and §4.2.1.3 (key usage), in DER.
        let usage: [(oid: String, isCritical: Bool, value: [UInt8])] =
            isAuthority
            ? [
                ("2.5.29.19", true, [0x30, 0x03, 0x01, 0x01, 0xFF]),  // SEQUENCE { cA TRUE }
                ("2.5.29.15", true, [0x03, 0x02, 0x01, 0x06]),  // keyCertSign, cRLSign
            ]
            : [("2.5.29.15", true, [0x03, 0x02, 0x07, 0x80])]  // digitalSignature
        return (usage + extensions).allSatisfy {
            Self.add($0.oid, isCritical: $0.isCritical, value: $0.value, to: certificate)
        }
    }

    /// Adds one extension with a DER value of the caller's making.
    private static func add(_ oid: String, isCritical: Bool, value: [UInt8], to certificate: OpaquePointer) -> Bool {
        guard let object = libcrypto.OBJ_txt2obj(oid, 1) else { return false }
        defer { libcrypto.ASN1_OBJECT_free(object) }
        guard let octets = libcrypto.ASN1_OCTET_STRING_new() else { return false }
        defer { libcrypto.ASN1_OCTET_STRING_free(octets) }
        let set = value.withUnsafeBufferPointer {
            libcrypto.ASN1_OCTET_STRING_set(octets, $0.baseAddress, Int32($0.count))
        }
        guard set == 1,
            let `extension` = libcrypto.X509_EXTENSION_create_by_OBJ(nil, object, isCritical ? 1 : 0, octets)
        else { return false }
        defer { libcrypto.X509_EXTENSION_free(`extension`) }
        return libcrypto.X509_add_ext(certificate, `extension`, -1) == 1
    }
}
