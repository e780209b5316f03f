/// The parts of an assertion as App Attest sends it: CBOR `{signature: bytes,
/// authenticatorData: bytes}`. Other keys are ignored: nothing is read from them.
struct AssertionObject {
    /// The DER ECDSA-SHA256 signature of the nonce SHA-256(authenticatorData ‖ SHA-256(clientData)).
    let signature: [UInt8]
    /// The authenticator data, as signed.
    let authenticatorData: [UInt8]

    /// The parts of `bytes`, refused when they are not this structure.
    init(decoding bytes: [UInt8]) throws(AttestError) {
        let value: CBORValue
        do { value = try CBORReader().read(bytes) } catch { throw .malformedCBOR(error) }
        guard let top = value.map else { throw .malformed("the assertion is not a CBOR map") }
        guard let signature = top["signature"]?.bytes else {
            throw .malformed("the assertion has no signature bytes")
        }
        guard let authenticatorData = top["authenticatorData"]?.bytes else {
            throw .malformed("the assertion has no authenticatorData bytes")
        }
        self.signature = signature
        self.authenticatorData = authenticatorData
    }
}
