import AmodbCrypto
import Testing

/// Certificates read, issued and checked through libcrypto: PEM and DER reading, extensions
/// by OID, P-256 keys, and the verdicts of a chain at a given time.
@Suite(.serialized) struct X509CertificateTests {
    static let day = 86_400
    static let now = 1_750_000_000  // 2025-06-15

    /// A root, an intermediate and a leaf, each valid from `now - day` to `now + days * day`.
    static func chain(leafDays: ClosedRange<Int> = -1...3) throws -> (
        root: X509Certificate, intermediate: X509Certificate, leaf: X509Certificate, leafKey: SigningKey
    ) {
        let rootKey = try SigningKey.p256()
        let root = try CertificateBuilder(
            commonName: "Test Root", serialNumber: 1, notBefore: now - day, notAfter: now + 3650 * day,
            isAuthority: true
        ).issue(for: rootKey, issuer: nil)
        let intermediateKey = try SigningKey.p256()
        let intermediate = try CertificateBuilder(
            commonName: "Test Intermediate", serialNumber: 2, notBefore: now - day, notAfter: now + 3650 * day,
            isAuthority: true
        ).issue(for: intermediateKey, issuer: (root, rootKey))
        let leafKey = try SigningKey.p256()
        var builder = CertificateBuilder(
            commonName: "Test Leaf", serialNumber: 3, notBefore: now + leafDays.lowerBound * day,
            notAfter: now + leafDays.upperBound * day, isAuthority: false)
        builder.extensions = [("1.2.840.113635.100.8.2", false, [0x30, 0x03, 0x02, 0x01, 0x07])]
        let leaf = try builder.issue(for: leafKey, issuer: (intermediate, intermediateKey))
        return (root, intermediate, leaf, leafKey)
    }

    @Test func anIssuedChainVerifiesAtATimeWithinItsValidity() throws {
        let (root, intermediate, leaf, _) = try Self.chain()
        let roots = TrustedRoots([root])
        #expect(roots.verify(leaf, intermediates: [intermediate], at: Self.now) == .trusted)
        #expect(roots.verify(leaf, intermediates: [intermediate], at: Self.now + 4 * Self.day) == .expired(depth: 0))
        #expect(roots.verify(leaf, intermediates: [intermediate], at: Self.now - 2 * Self.day) != .trusted)
        guard case .untrusted = roots.verify(leaf, intermediates: [], at: Self.now) else {
            Issue.record("a chain without its intermediate")
            return
        }
        guard case .untrusted = TrustedRoots([intermediate]).verify(leaf, intermediates: [], at: Self.now) else {
            Issue.record("an intermediate trusted as a root: not self-signed, so no anchor")
            return
        }
    }

    @Test func aLeafNotYetValidIsToldApart() throws {
        let (root, intermediate, leaf, _) = try Self.chain(leafDays: 1...3)
        #expect(
            TrustedRoots([root]).verify(leaf, intermediates: [intermediate], at: Self.now) == .notYetValid(depth: 0))
    }

    @Test func readsExtensionsAndTheP256Key() throws {
        let (_, _, leaf, leafKey) = try Self.chain()
        #expect(try leaf.extensionValue(oid: "1.2.840.113635.100.8.2") == [0x30, 0x03, 0x02, 0x01, 0x07])
        #expect(try leaf.extensionValue(oid: "1.2.840.113635.100.8.5") == nil)
        #expect(try leaf.extensionValue(oid: "2.5.29.15") == [0x03, 0x02, 0x07, 0x80], "key usage")
        #expect(throws: CryptoError.self) { try leaf.extensionValue(oid: "not an oid") }
        #expect(leaf.p256PublicKeyPoint == leafKey.p256PublicKeyPoint)
        #expect(leaf.p256PublicKeyPoint?.count == 65)
        let reread = try X509Certificate(der: leaf.der)
        #expect(reread.der == leaf.der)
    }

    @Test func anExtensionGivenTwiceIsRefused() throws {
        let key = try SigningKey.p256()
        var builder = CertificateBuilder(
            commonName: "Twice", serialNumber: 9, notBefore: Self.now, notAfter: Self.now + Self.day, isAuthority: false
        )
        builder.extensions = [("1.2.3.4", false, [0x05, 0x00]), ("1.2.3.4", false, [0x05, 0x00])]
        let certificate = try builder.issue(for: key, issuer: nil)
        #expect(throws: CryptoError.self) { try certificate.extensionValue(oid: "1.2.3.4") }
    }

    @Test func anRSAKeyIsNoP256Point() throws {
        let key = try SigningKey.rsa()
        let certificate = try CertificateBuilder(
            commonName: "RSA", serialNumber: 5, notBefore: Self.now, notAfter: Self.now + Self.day, isAuthority: false
        ).issue(for: key, issuer: nil)
        #expect(certificate.p256PublicKeyPoint == nil)
        #expect(key.p256PublicKeyPoint == nil)
    }

    @Test func refusesDERThatIsNotExactlyOneCertificate() throws {
        let (_, _, leaf, _) = try Self.chain()
        #expect(throws: CryptoError.self) { try X509Certificate(der: []) }
        #expect(throws: CryptoError.self) { try X509Certificate(der: leaf.der + [0x00]) }
        #expect(throws: CryptoError.self) { try X509Certificate(der: Array(leaf.der.dropLast())) }
        #expect(throws: CryptoError.self) { try X509Certificate(der: [0x30, 0x03, 0x02, 0x01, 0x01]) }
        #expect(throws: CryptoError.self) {
            try X509Certificate(der: [UInt8](repeating: 0x30, count: X509Certificate.maximumBytes + 1))
        }
    }

    @Test func readsPEMAndRefusesWhatIsNotPEM() throws {
        let (root, intermediate, _, _) = try Self.chain()
        let pem = [root, intermediate].map { Self.pem($0.der) }.joined(separator: "\nsome text between\r\n")
        let read = try X509Certificate.certificates(pem: pem)
        #expect(read.map(\.der) == [root.der, intermediate.der])
        #expect(throws: CryptoError.self) { try X509Certificate.certificates(pem: "") }
        #expect(throws: CryptoError.self) {
            try X509Certificate.certificates(pem: "-----BEGIN CERTIFICATE-----\nAAAA\n")
        }
        #expect(throws: CryptoError.self) {
            try X509Certificate.certificates(pem: String(Self.pem(root.der).map { $0 == "M" ? "-" : $0 }))
        }
    }

    /// `der` as PEM, 64 characters a line, with standard base64 and padding.
    static func pem(_ der: [UInt8]) -> String {
        var base64 = String(Base64URL.encode(der).map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
        while base64.count % 4 != 0 { base64 += "=" }
        var lines: [String] = []
        var rest = Substring(base64)
        while !rest.isEmpty {
            lines.append(String(rest.prefix(64)))
            rest = rest.dropFirst(64)
        }
        return (["-----BEGIN CERTIFICATE-----"] + lines + ["-----END CERTIFICATE-----"]).joined(separator: "\n")
    }
}
