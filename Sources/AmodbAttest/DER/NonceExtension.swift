/// The extension Apple's App Attest leaf certificate carries its nonce in (OID
/// 1.2.840.113635.100.8.2): `SEQUENCE { [1] EXPLICIT OCTET STRING }`, the octet string
/// being SHA-256(authenticatorData ‖ clientDataHash).
enum NonceExtension {
    /// The extension's object identifier.
    static let oid = "1.2.840.113635.100.8.2"

    /// The nonce in the extension's DER `value`, or `nil` when the value is not the
    /// structure above with exactly one `[1]` element of 32 bytes. Other elements of the
    /// sequence, which Apple may add, are skipped; the `[1]` element is read in full.
    static func nonce(in value: [UInt8]) -> [UInt8]? {
        do throws(DERReader.Failure) {
            var outer = DERReader(value[...])
            let sequence = try outer.read(tag: 0x30)
            try outer.expectEnd()
            var fields = DERReader(sequence)
            var nonce: [UInt8]?
            while !fields.isAtEnd {
                let (tag, content) = try fields.readElement()
                guard tag == 0xA1 else { continue }
                guard nonce == nil else { return nil }
                var explicit = DERReader(content)
                let octets = try explicit.read(tag: 0x04)
                try explicit.expectEnd()
                nonce = Array(octets)
            }
            return nonce?.count == 32 ? nonce : nil
        } catch {
            return nil
        }
    }
}
