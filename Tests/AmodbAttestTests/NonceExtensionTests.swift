import AmodbAttestTestSupport
import Testing

@testable import AmodbAttest

/// The leaf's nonce extension is read by the minimal DER reader: Apple's structure, and
/// nothing that only resembles it.
@Suite struct NonceExtensionTests {
    static let nonce = [UInt8](0..<32)

    @Test func readsApplesStructure() {
        #expect(NonceExtension.nonce(in: NonceExtensionDER.value(nonce: Self.nonce)) == Self.nonce)
    }

    @Test func skipsOtherElementsOfTheSequence() {
        let octets: [UInt8] = [0x04, 0x20] + Self.nonce
        let fields: [UInt8] = [0x02, 0x01, 0x05] + [0xA1, 0x22] + octets + [0xA2, 0x00]
        #expect(NonceExtension.nonce(in: [0x30, UInt8(fields.count)] + fields) == Self.nonce)
    }

    @Test func readsALongFormLength() {
        let octets: [UInt8] = [0x04, 0x20] + Self.nonce
        let explicit: [UInt8] = [0xA1, 0x22] + octets
        let padding: [UInt8] = [0x04, 0x81, 0x80] + [UInt8](repeating: 0, count: 128)
        let fields = explicit + padding
        #expect(NonceExtension.nonce(in: [0x30, 0x81, UInt8(fields.count)] + fields) == Self.nonce)
    }

    /// A value that must not yield a nonce, and why.
    struct Refusal: Sendable, CustomTestStringConvertible {
        let name: String
        let value: [UInt8]
        var testDescription: String { name }
    }

    static let refusals: [Refusal] = {
        let good = NonceExtensionDER.value(nonce: nonce)
        let octets: [UInt8] = [0x04, 0x20] + nonce
        let explicit: [UInt8] = [0xA1, 0x22] + octets
        return [
            Refusal(name: "empty", value: []),
            Refusal(name: "cut short", value: Array(good.dropLast())),
            Refusal(name: "trailing bytes", value: good + [0x00]),
            Refusal(name: "not a sequence", value: [0x31] + good.dropFirst()),
            Refusal(name: "no [1] element", value: [0x30, 0x03, 0x02, 0x01, 0x05]),
            Refusal(name: "[1] twice", value: [0x30, UInt8(2 * explicit.count)] + explicit + explicit),
            Refusal(name: "[1] IMPLICIT", value: [0x30, 0x22, 0x81, 0x20] + nonce),
            Refusal(name: "a nonce of 31 bytes", value: NonceExtensionDER.value(nonce: Array(nonce.dropLast()))),
            Refusal(name: "an INTEGER inside [1]", value: [0x30, 0x24, 0xA1, 0x22, 0x02, 0x20] + nonce),
            Refusal(
                name: "bytes after the OCTET STRING in [1]", value: [0x30, 0x26, 0xA1, 0x24] + octets + [0x05, 0x00]),
            Refusal(name: "an indefinite length", value: [0x30, 0x80] + explicit + [0x00, 0x00]),
            Refusal(name: "a long-form length under 128", value: [0x30, 0x81, 0x24] + explicit),
            Refusal(name: "a long-form length with a leading zero", value: [0x30, 0x82, 0x00, 0x24] + explicit),
            Refusal(name: "a length of five bytes", value: [0x30, 0x85, 0x00, 0x00, 0x00, 0x00, 0x24] + explicit),
            Refusal(name: "a multi-byte tag", value: [0x3F, 0x01, 0x24] + explicit),
        ]
    }()

    @Test(arguments: refusals)
    func refuses(_ refusal: Refusal) {
        #expect(NonceExtension.nonce(in: refusal.value) == nil)
    }
}
