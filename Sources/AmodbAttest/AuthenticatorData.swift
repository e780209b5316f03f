/// Authenticator data (WebAuthn Level 2 §6.1) as App Attest writes it: the relying party
/// ID hash (32 bytes), flags (1), the signature counter (4, big-endian) and, in an
/// attestation, the attested credential data (§6.5.1): the AAGUID (16), the credential
/// ID's length (2, big-endian), the credential ID, then the credential's COSE key, which
/// is not read here (the leaf certificate's key is the one App Attest checks).
struct AuthenticatorData {
    /// Bytes before the attested credential data.
    static let fixedBytes = 37
    /// The flag saying attested credential data follows (WebAuthn §6.1, bit 6, `AT`).
    static let attestedCredentialDataFlag: UInt8 = 0x40

    /// SHA-256 of the App ID the key belongs to.
    let relyingPartyIDHash: ArraySlice<UInt8>
    /// The signature counter: 0 in an attestation, then one more for each assertion.
    let signCount: UInt32
    /// The AAGUID, present in an attestation: `appattestdevelop` or `appattest` and seven zeros.
    let aaguid: ArraySlice<UInt8>?
    /// The credential ID, present in an attestation: the key identifier.
    let credentialID: ArraySlice<UInt8>?

    /// The parts of `bytes`, or `nil` when they are too short. The attested credential data
    /// is read when `withAttestedCredential` (an attestation's, whose `AT` flag must then be
    /// set); an assertion's is never read, though App Attest sets its `AT` flag too.
    init?(_ bytes: [UInt8], withAttestedCredential: Bool) {
        guard bytes.count >= Self.fixedBytes else { return nil }
        relyingPartyIDHash = bytes[0..<32]
        let flags = bytes[32]
        signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        guard withAttestedCredential else {
            aaguid = nil
            credentialID = nil
            return
        }
        guard flags & Self.attestedCredentialDataFlag != 0, bytes.count >= Self.fixedBytes + 18 else { return nil }
        aaguid = bytes[37..<53]
        let length = Int(bytes[53]) << 8 | Int(bytes[54])
        guard bytes.count >= 55 + length else { return nil }
        credentialID = bytes[55..<55 + length]
    }
}
