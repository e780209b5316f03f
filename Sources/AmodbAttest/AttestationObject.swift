/// The parts of an attestation object (WebAuthn §6.5.4) as App Attest sends it: CBOR
/// `{fmt: text, attStmt: {x5c: [bytes], receipt: bytes}, authData: bytes}`. Other keys, at
/// either level, are ignored: nothing is read from them.
struct AttestationObject {
    /// The attestation statement format, `apple-appattest`.
    let format: String
    /// The DER certificates of `x5c`, the leaf first; at least one.
    let certificates: [[UInt8]]
    /// Apple's receipt.
    let receipt: [UInt8]
    /// The authenticator data, as signed.
    let authenticatorData: [UInt8]

    /// The parts of `bytes`, refused when they are not this structure or hold more than
    /// `maximumCertificates` certificates.
    init(decoding bytes: [UInt8], maximumCertificates: Int) throws(AttestError) {
        let value: CBORValue
        do { value = try CBORReader().read(bytes) } catch { throw .malformedCBOR(error) }
        guard let top = value.map else { throw .malformed("the attestation is not a CBOR map") }
        guard let format = top["fmt"]?.text else { throw .malformed("the attestation has no text fmt") }
        guard let statement = top["attStmt"]?.map else { throw .malformed("the attestation has no attStmt map") }
        guard let authenticatorData = top["authData"]?.bytes else {
            throw .malformed("the attestation has no authData bytes")
        }
        guard let chain = statement["x5c"]?.array, !chain.isEmpty else {
            throw .malformed("the attestation has no x5c certificates")
        }
        guard chain.count <= maximumCertificates else {
            throw .malformed("the attestation has more than \(maximumCertificates) certificates")
        }
        var certificates: [[UInt8]] = []
        for entry in chain {
            guard let der = entry.bytes else { throw .malformed("an x5c entry is not a byte string") }
            certificates.append(der)
        }
        guard let receipt = statement["receipt"]?.bytes else {
            throw .malformed("the attestation has no receipt bytes")
        }
        self.format = format
        self.certificates = certificates
        self.receipt = receipt
        self.authenticatorData = authenticatorData
    }
}
