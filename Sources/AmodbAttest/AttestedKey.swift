/// A key App Attest vouched for: what a server keeps once an attestation verifies, to
/// check the key's assertions later (`AppAttestVerifier.verifyAssertion`).
public struct AttestedKey: Sendable, Equatable {
    /// Which of Apple's App Attest environments made the key.
    public enum Environment: String, Sendable, Equatable {
        /// The production environment: AAGUID `appattest` followed by seven zero bytes.
        case production
        /// The development environment (apps built for development): AAGUID `appattestdevelop`.
        case development
    }

    /// The key identifier: SHA-256 of `publicKey` (32 bytes).
    public let keyID: [UInt8]
    /// The key's public half as an uncompressed P-256 point (`0x04 ‖ x ‖ y`, 65 bytes).
    public let publicKey: [UInt8]
    /// The app the key belongs to.
    public let appID: AppID
    /// The environment that made the key.
    public let environment: Environment
    /// Apple's receipt for the attestation (PKCS #7), for a later fraud-risk query; not checked here.
    public let receipt: [UInt8]

    /// A key with these parts; `AppAttestVerifier.verifyAttestation` makes them.
    public init(keyID: [UInt8], publicKey: [UInt8], appID: AppID, environment: Environment, receipt: [UInt8]) {
        self.keyID = keyID
        self.publicKey = publicKey
        self.appID = appID
        self.environment = environment
        self.receipt = receipt
    }
}
