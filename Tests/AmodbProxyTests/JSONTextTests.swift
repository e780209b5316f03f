import Testing

@testable import AmodbProxy

/// JSON strings written by hand (error bodies, log lines) escape exactly what RFC 8259 §7 requires.
struct JSONTextTests {
    @Test(arguments: [
        ("plain text", "\"plain text\""), ("", "\"\""), ("café", "\"café\""),
        ("a\"b", "\"a\\\"b\""), ("a\\b", "\"a\\\\b\""), ("line\nbreak", "\"line\\nbreak\""), ("\u{1}", "\"\\u0001\""),
    ])
    func quotesJSONTextEscapingOnlyWhatMustBe(text: String, quoted: String) {
        #expect(JSONText.quoted(text) == quoted)
    }

    /// Text is checked eight bytes at a time: bytes that need an escape and bytes next to
    /// them in value that do not, at every position of texts up to three words long, must
    /// come out as a byte-by-byte escape writes them.
    @Test
    func escapesEveryByteAtEveryPositionAsByteByByteEscaping() {
        let probes: [UInt8] = [
            0x00, 0x01, 0x0A, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x5B, 0x5C, 0x5D, 0x7F, 0x80, 0xC3, 0xFF,
        ]
        for length in 1...25 {
            for position in 0..<length {
                for probe in probes {
                    var text = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    text[position] = probe
                    #expect(Self.written(text) == Self.escapedByteByByte(text), "\(text)")
                }
            }
        }
    }

    private static func written(_ text: [UInt8]) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: text.count * JSONText.maxBytesPerByte + 2) { buffer, count in
            count = text.withUnsafeBufferPointer { JSONText.write(quoting: $0, to: buffer.baseAddress!) }
        }
    }

    private static func escapedByteByByte(_ text: [UInt8]) -> [UInt8] {
        let hex = Array("0123456789abcdef".utf8)
        var out: [UInt8] = [0x22]
        for byte in text {
            switch byte {
            case 0x22: out += [0x5C, 0x22]
            case 0x5C: out += [0x5C, 0x5C]
            case 0x0A: out += Array("\\n".utf8)
            case 0x0D: out += Array("\\r".utf8)
            case 0x09: out += Array("\\t".utf8)
            case ..<0x20: out += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: out.append(byte)
            }
        }
        return out + [0x22]
    }
}
