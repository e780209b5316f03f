public import AmodbCrypto
public import Foundation

/// Verifies Apple App Attest offline, by every step of Apple's "Validating apps that connect
/// to your server": an attestation once per key (`verifyAttestation`), then each of the
/// key's assertions (`verifyAssertion`).
///
/// Client data is taken raw, as the app had it (the one-time challenge the server gave, or
/// what the app built around it), and hashed here: App Attest's `clientDataHash` is
/// SHA-256(clientData), and a caller has one thing to pass, the data, never its hash.
///
/// Every check is made, in an order that spends the least first: sizes before parsing,
/// parsing before hashing, and the certificate chain's signatures last; an input that
/// fails several checks is refused for the first. What the checks rely on: the clock the
/// caller passes as `time` (the leaf certificate is valid for about three days), and
/// the caller keeping each key's last counter and each challenge's one use.
public struct AppAttestVerifier: Sendable {
    /// Bounds on what one verification may cost, each checked before the work it bounds.
    public struct Limits: Sendable, Equatable {
        /// The longest attestation read, in bytes. Apple's are about 5.5 KiB, most of it the receipt.
        public var maximumAttestationBytes: Int
        /// The longest assertion read, in bytes. Apple's are about 150.
        public var maximumAssertionBytes: Int
        /// The longest client data hashed, in bytes.
        public var maximumClientDataBytes: Int
        /// The most certificates read from an attestation's `x5c`. Apple's holds two: the leaf
        /// and one intermediate.
        public var maximumCertificates: Int

        /// Limits with the defaults given: 32 KiB, 4 KiB, 16 KiB, 4 certificates.
        public init(
            maximumAttestationBytes: Int = 32 * 1024, maximumAssertionBytes: Int = 4 * 1024,
            maximumClientDataBytes: Int = 16 * 1024, maximumCertificates: Int = 4
        ) {
            self.maximumAttestationBytes = maximumAttestationBytes
            self.maximumAssertionBytes = maximumAssertionBytes
            self.maximumClientDataBytes = maximumClientDataBytes
            self.maximumCertificates = maximumCertificates
        }
    }

    /// The attestation statement format App Attest uses.
    public static let format = "apple-appattest"
    /// The AAGUID of keys from App Attest's production environment: `appattest` and seven zeros.
    public static let productionAAGUID: [UInt8] = Array("appattest".utf8) + [UInt8](repeating: 0, count: 7)
    /// The AAGUID of keys from App Attest's development environment.
    public static let developmentAAGUID: [UInt8] = Array("appattestdevelop".utf8)
    /// The largest DER ECDSA P-256 signature: two 33-byte integers and three headers.
    static let maximumSignatureBytes = 72

    /// The apps whose keys are accepted.
    public let appIDs: [AppID]
    /// Whether keys from the development environment are accepted.
    public let allowsDevelopment: Bool
    /// The roots an attestation's chain must end at.
    public let trustedRoots: TrustedRoots
    /// The bounds on each verification.
    public let limits: Limits
    /// Each accepted app with its relying party ID hash, computed once.
    private let relyingParties: [(app: AppID, hash: [UInt8])]

    /// A verifier accepting keys of `appIDs`, from the development environment too when
    /// `allowDevelopment`, whose attestations chain to `trustedRoots` (Apple's root unless
    /// a test or a private deployment gives others).
    public init(
        appIDs: [AppID], allowDevelopment: Bool, trustedRoots: TrustedRoots = .appleAppAttestation,
        limits: Limits = Limits()
    ) {
        self.appIDs = appIDs
        allowsDevelopment = allowDevelopment
        self.trustedRoots = trustedRoots
        self.limits = limits
        relyingParties = appIDs.map { ($0, $0.relyingPartyIDHash) }
    }

    /// The key `attestation` vouches for, checked at `time`: the object `attestKey` returned
    /// for the key `keyID`, made over `clientData` (the challenge the server gave, as the
    /// app hashed it). Throws the first check that fails.
    public func verifyAttestation(_ attestation: [UInt8], keyID: [UInt8], clientData: [UInt8], at time: Date)
        throws(AttestError) -> AttestedKey
    {
        guard attestation.count <= limits.maximumAttestationBytes else {
            throw .tooLarge(input: "attestation", limit: limits.maximumAttestationBytes)
        }
        guard clientData.count <= limits.maximumClientDataBytes else {
            throw .tooLarge(input: "client data", limit: limits.maximumClientDataBytes)
        }
        let object = try AttestationObject(decoding: attestation, maximumCertificates: limits.maximumCertificates)
        guard object.format == Self.format else { throw .wrongFormat }
        guard let authenticatorData = AuthenticatorData(object.authenticatorData, withAttestedCredential: true),
            let aaguid = authenticatorData.aaguid, let credentialID = authenticatorData.credentialID
        else {
            throw .malformed("the attestation's authenticator data is too short or has no attested credential")
        }
        // The app, the counter, the AAGUID and the credential ID first: a comparison each.
        let app = try relyingParty(authenticatorData.relyingPartyIDHash)
        guard authenticatorData.signCount == 0 else { throw .counterNotZero }
        let environment = try environment(aaguid)
        guard credentialID.elementsEqual(keyID) else { throw .credentialIDMismatch }

        // The key identifier is the hash of the leaf's key: the leaf is the key's certificate.
        let certificates = try object.certificates.map { (der) throws(AttestError) -> X509Certificate in
            do { return try X509Certificate(der: der) } catch {
                throw .malformedCertificate("a certificate in the attestation could not be read")
            }
        }
        let leaf = certificates[0]
        guard let publicKey = leaf.p256PublicKeyPoint else {
            throw .malformedCertificate("the attestation's leaf certificate has no P-256 key")
        }
        guard SHA256.hash(publicKey) == keyID else { throw .keyIDMismatch }

        // The nonce binds the authenticator data and the client data to the leaf.
        let clientDataHash = SHA256.hash(clientData)
        let nonce = SHA256.hash(object.authenticatorData + clientDataHash)
        let extensionValue: [UInt8]?
        do { extensionValue = try leaf.extensionValue(oid: NonceExtension.oid) } catch {
            throw .malformedCertificate("the attestation's leaf certificate repeats its nonce extension")
        }
        guard let extensionValue, let certified = NonceExtension.nonce(in: extensionValue) else {
            throw .malformedCertificate("the attestation's leaf certificate has no readable nonce")
        }
        guard certified == nonce else { throw .nonceMismatch }

        // The costliest last: the chain's signatures, to a trusted root, at `time`.
        switch trustedRoots.verify(leaf, intermediates: Array(certificates.dropFirst()), at: Self.seconds(time)) {
        case .trusted: break
        case .expired: throw .certificateExpired
        case .notYetValid: throw .certificateNotYetValid
        case .untrusted(let reason): throw .untrustedChain(reason)
        }
        return AttestedKey(
            keyID: keyID, publicKey: publicKey, appID: app, environment: environment, receipt: object.receipt)
    }

    /// The counter of `assertion`, made by the key `publicKey` (an `AttestedKey`'s
    /// `publicKey`) over `clientData`, when it is greater than `previousCounter` (the last
    /// one accepted for the key, 0 after the attestation). When `appID` is given (the
    /// key's own `AttestedKey.appID`), the assertion must name that app; otherwise any
    /// accepted app. The caller stores the returned counter before acting on the request,
    /// so that a replay of the same assertion is refused.
    public func verifyAssertion(
        _ assertion: [UInt8], clientData: [UInt8], publicKey: [UInt8], previousCounter: UInt32,
        appID: AppID? = nil
    ) throws(AttestError) -> UInt32 {
        guard assertion.count <= limits.maximumAssertionBytes else {
            throw .tooLarge(input: "assertion", limit: limits.maximumAssertionBytes)
        }
        guard clientData.count <= limits.maximumClientDataBytes else {
            throw .tooLarge(input: "client data", limit: limits.maximumClientDataBytes)
        }
        let key: PublicKey
        do { key = try PublicKey(p256Point: publicKey) } catch { throw .invalidPublicKey }
        let object = try AssertionObject(decoding: assertion)
        guard let authenticatorData = AuthenticatorData(object.authenticatorData, withAttestedCredential: false) else {
            throw .malformed("the assertion's authenticator data is too short")
        }
        // The app and the counter first, then the signature, which costs the most. That the
        // client data holds the challenge the server gave is the caller's to check.
        let app = try relyingParty(authenticatorData.relyingPartyIDHash)
        if let appID, app != appID { throw .unknownApp }
        guard authenticatorData.signCount > previousCounter else { throw .counterNotIncreasing }
        guard object.signature.count <= Self.maximumSignatureBytes else { throw .badSignature }
        // The device signs the nonce SHA-256(authenticatorData ‖ SHA-256(clientData)) as its
        // message with ECDSA-SHA256, which hashes it once more: Apple's "verify that the
        // assertion's signature is valid for nonce", and what the recorded samples verify by.
        let nonce = SHA256.hash(object.authenticatorData + SHA256.hash(clientData))
        guard key.isValidSignature(der: object.signature, of: nonce) else { throw .badSignature }
        return authenticatorData.signCount
    }

    /// The accepted app whose relying party ID hash is `hash`.
    private func relyingParty(_ hash: ArraySlice<UInt8>) throws(AttestError) -> AppID {
        guard let party = relyingParties.first(where: { $0.hash.elementsEqual(hash) }) else { throw .unknownApp }
        return party.app
    }

    /// The environment an AAGUID names, when this verifier accepts it.
    private func environment(_ aaguid: ArraySlice<UInt8>) throws(AttestError) -> AttestedKey.Environment {
        if aaguid.elementsEqual(Self.productionAAGUID) { return .production }
        guard aaguid.elementsEqual(Self.developmentAAGUID) else { throw .wrongAAGUID }
        guard allowsDevelopment else { throw .developmentNotAllowed }
        return .development
    }

    /// `time` in whole seconds since 1970, as libcrypto's verification takes it; a date
    /// beyond what a certificate can name is clamped, never trapped on.
    static func seconds(_ time: Date) -> Int {
        let seconds = time.timeIntervalSince1970.rounded(.down)
        let limit = 253_402_300_799.0  // 9999-12-31T23:59:59Z, the last second X.509 can write
        return seconds.isNaN ? 0 : Int(min(max(seconds, -limit), limit))
    }
}
