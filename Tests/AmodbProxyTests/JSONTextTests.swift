import AmodbBytes
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
    /// come out as a byte-by-byte escape writes them. Bytes from 0x80 up come in scalars of
    /// two to four bytes, as they do in every `String`.
    @Test
    func escapesEveryByteAtEveryPositionAsByteByByteEscaping() {
        let probes: [Unicode.Scalar] = [
            "\u{0}", "\u{1}", "\n", "\u{1F}", " ", "!", "\"", "#", "[", "\\", "]", "\u{7F}", "\u{80}", "é", "\u{7FF}",
            "\u{FFFF}", "\u{10FFFF}",
        ]
        for length in 1...25 {
            for position in 0..<length {
                for probe in probes {
                    var scalars = [Unicode.Scalar](repeating: "a", count: length)
                    scalars[position] = probe
                    var text = ""
                    text.unicodeScalars.append(contentsOf: scalars)
                    #expect(Self.written(text) == Self.escapedByteByByte(Array(text.utf8)), "\(scalars)")
                }
            }
        }
    }

    /// Written into room of exactly the most the text can take.
    private static func written(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        ByteWriter.append(to: &bytes, atMost: text.utf8.count * JSONText.maxBytesPerByte + 2) {
            JSONText.write(quoting: text, to: &$0)
        }
        return bytes
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
