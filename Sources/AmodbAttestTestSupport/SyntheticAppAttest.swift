package import AmodbAttest
package import AmodbCrypto
package import Foundation

/// A stand-in for Apple's App Attest service, for tests that drive the whole flow offline:
/// its own root and intermediate (P-256, made with libcrypto when it is created), device
/// keys, attestations for any key, client data and app, and assertions with any counter.
/// An `AppAttestVerifier` given `trustedRoots` accepts what it makes, by the same checks
/// it makes of Apple's.
package struct SyntheticAppAttest: Sendable {
    /// The root certificate, self-signed.
    package let root: X509Certificate
    /// The intermediate certificate the root signed, which signs each leaf.
    package let intermediate: X509Certificate
    private let intermediateKey: SigningKey

    /// The roots a verifier trusts to accept what this makes: its own root alone.
    package var trustedRoots: TrustedRoots { TrustedRoots([root]) }

    /// A root and an intermediate valid from a day before `now` until ten years after,
    /// unless `validity` says otherwise.
    package init(now: Date = Date(), validity: ClosedRange<Date>? = nil) throws(CryptoError) {
        let validity = validity ?? now.addingTimeInterval(-86_400)...now.addingTimeInterval(10 * 365 * 86_400)
        let rootKey = try SigningKey.p256()
        root = try CertificateBuilder(
            commonName: "Synthetic App Attestation Root CA", serialNumber: Self.serialNumber(),
            notBefore: Self.seconds(validity.lowerBound), notAfter: Self.seconds(validity.upperBound),
            isAuthority: true
        ).issue(for: rootKey, issuer: nil)
        intermediateKey = try SigningKey.p256()
        intermediate = try CertificateBuilder(
            commonName: "Synthetic App Attestation CA 1", serialNumber: Self.serialNumber(),
            notBefore: Self.seconds(validity.lowerBound), notAfter: Self.seconds(validity.upperBound),
            isAuthority: true
        ).issue(for: intermediateKey, issuer: (root, rootKey))
    }

    /// A device's App Attest key: what `DCAppAttestService.generateKey` makes on an iPhone.
    package struct DeviceKey: Sendable {
        /// The private key, which signs assertions.
        package let signingKey: SigningKey
        /// The public key as an uncompressed P-256 point (65 bytes).
        package let publicKey: [UInt8]
        /// The key identifier: SHA-256 of `publicKey`.
        package let keyID: [UInt8]

        /// A fresh P-256 key.
        package init() throws(CryptoError) {
            signingKey = try SigningKey.p256()
            guard let point = signingKey.p256PublicKeyPoint else {
                throw CryptoError("libcrypto gave no P-256 point for a P-256 key")
            }
            publicKey = point
            keyID = SHA256.hash(point)
        }
    }

    /// What an attestation says beyond its key, client data and app, each as App Attest
    /// writes it unless a test changes it to see it refused.
    package struct AttestationOptions: Sendable {
        /// The environment, which sets the AAGUID.
        package var environment: AttestedKey.Environment = .production
        /// The AAGUID, when not the environment's.
        package var aaguid: [UInt8]?
        /// The signature counter: 0 in every genuine attestation.
        package var signCount: UInt32 = 0
        /// The credential ID, when not the key identifier.
        package var credentialID: [UInt8]?
        /// The format, `apple-appattest`.
        package var format = AppAttestVerifier.format
        /// The receipt's bytes: Apple's is PKCS #7, which nothing here reads.
        package var receipt: [UInt8] = Array("synthetic receipt".utf8)
        /// The leaf's validity: by default an hour before the attestation's `now` until
        /// three days after, as Apple's leaves are.
        package var leafValidity: ClosedRange<Date>?

        /// The options of a genuine production attestation.
        package init() {}
    }

    /// The attestation `DCAppAttestService.attestKey` would return for `device`'s key over
    /// `clientData`, for the app `appID`, made at `now`: a leaf for the key signed by the
    /// intermediate, carrying the nonce SHA-256(authenticatorData ‖ SHA-256(clientData)).
    package func attestation(
        for device: DeviceKey, clientData: [UInt8], appID: AppID, now: Date = Date(),
        options: AttestationOptions = AttestationOptions()
    ) throws(CryptoError) -> [UInt8] {
        try attestation(
            for: device, clientDataHash: SHA256.hash(clientData), appID: appID, now: now, options: options)
    }

    /// The same, from the client data's hash, as an app hands `DCAppAttestService` only that.
    package func attestation(
        for device: DeviceKey, clientDataHash: [UInt8], appID: AppID, now: Date = Date(),
        options: AttestationOptions = AttestationOptions()
    ) throws(CryptoError) -> [UInt8] {
        let aaguid =
            options.aaguid
            ?? (options.environment == .production
                ? AppAttestVerifier.productionAAGUID : AppAttestVerifier.developmentAAGUID)
        let credentialID = options.credentialID ?? device.keyID
        let authenticatorData =
            Self.authenticatorDataHead(appID: appID, signCount: options.signCount) + aaguid
            + [UInt8(credentialID.count >> 8), UInt8(credentialID.count & 0xFF)] + credentialID
            + Self.coseKey(device.publicKey)
        let nonce = SHA256.hash(authenticatorData + clientDataHash)
        let validity = options.leafValidity ?? now.addingTimeInterval(-3_600)...now.addingTimeInterval(3 * 86_400)
        var builder = CertificateBuilder(
            commonName: Self.hex(device.keyID), serialNumber: Self.serialNumber(),
            notBefore: Self.seconds(validity.lowerBound), notAfter: Self.seconds(validity.upperBound),
            isAuthority: false)
        builder.extensions.append((NonceExtensionDER.oid, false, NonceExtensionDER.value(nonce: nonce)))
        let leaf = try builder.issue(for: device.signingKey, issuer: (intermediate, intermediateKey))
        return CBORWriter.encode(
            .map([
                "fmt": .text(options.format),
                "attStmt": .map([
                    "x5c": .array([.bytes(leaf.der), .bytes(intermediate.der)]), "receipt": .bytes(options.receipt),
                ]),
                "authData": .bytes(authenticatorData),
            ]))
    }

    /// The assertion `DCAppAttestService.generateAssertion` would return from `device` over
    /// `clientData` for the app `appID`, with the counter at `counter`: CBOR
    /// `{signature, authenticatorData}`, the signature DER ECDSA-SHA256 of the nonce
    /// SHA-256(authenticatorData ‖ SHA-256(clientData)), as an iPhone signs it.
    package static func assertion(by device: DeviceKey, clientData: [UInt8], appID: AppID, counter: UInt32)
        throws(CryptoError) -> [UInt8]
    {
        try assertion(by: device, clientDataHash: SHA256.hash(clientData), appID: appID, counter: counter)
    }

    /// The same, from the client data's hash.
    package static func assertion(by device: DeviceKey, clientDataHash: [UInt8], appID: AppID, counter: UInt32)
        throws(CryptoError) -> [UInt8]
    {
        let authenticatorData = authenticatorDataHead(appID: appID, signCount: counter)
        let nonce = SHA256.hash(authenticatorData + clientDataHash)
        let signature = try device.signingKey.derSignature(nonce)
        return CBORWriter.encode(
            .map(["signature": .bytes(signature), "authenticatorData": .bytes(authenticatorData)]))
    }

    /// The first 37 bytes of authenticator data: the App ID's hash, the flags App Attest
    /// sets (`AT`, 0x40, in attestations and assertions alike) and the counter.
    private static func authenticatorDataHead(appID: AppID, signCount: UInt32) -> [UInt8] {
        appID.relyingPartyIDHash + [0x40]
            + [
                UInt8(signCount >> 24), UInt8((signCount >> 16) & 0xFF), UInt8((signCount >> 8) & 0xFF),
                UInt8(signCount & 0xFF),
            ]
    }

    /// A P-256 key as COSE writes it (RFC 9053 §7.1.1): `{1: 2 (EC2), 3: -7 (ES256),
    /// -1: 1 (P-256), -2: x, -3: y}`, integer keys in the order App Attest writes them.
    private static func coseKey(_ point: [UInt8]) -> [UInt8] {
        [0xA5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x58, 0x20] + point[1...32] + [0x22, 0x58, 0x20]
            + point[33...64]
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }

    private static func serialNumber() -> Int { Int.random(in: 1...Int(Int32.max)) }

    private static func seconds(_ date: Date) -> Int { Int(date.timeIntervalSince1970.rounded(.down)) }
}

/// The nonce extension as Apple's leaf certificates carry it, in DER.
package enum NonceExtensionDER {
    /// Its object identifier, 1.2.840.113635.100.8.2.
    package static let oid = "1.2.840.113635.100.8.2"

    /// `SEQUENCE { [1] EXPLICIT OCTET STRING nonce }` for a nonce of up to 125 bytes.
    package static func value(nonce: [UInt8]) -> [UInt8] {
        precondition(nonce.count <= 125, "a nonce short enough for one-byte DER lengths")
        let octets = [0x04, UInt8(nonce.count)] + nonce
        let explicit = [0xA1, UInt8(octets.count)] + octets
        return [0x30, UInt8(explicit.count)] + explicit
    }
}
