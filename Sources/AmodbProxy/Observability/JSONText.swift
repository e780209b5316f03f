import AmodbBytes

/// Writing JSON text by hand where a `JSONEncoder` per call would cost too much (error
/// bodies under a flood, log lines): one escaping rule for both.
enum JSONText {
    /// `text` as a JSON string: quoted, with `"`, `\\` and control characters escaped (RFC 8259 §7).
    static func quoted(_ text: String) -> String {
        var bytes: [UInt8] = []
        ByteWriter.append(to: &bytes, atMost: text.utf8.count * maxBytesPerByte + 2) { write(quoting: text, to: &$0) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Most bytes one byte of text becomes (`\u001f`).
    static let maxBytesPerByte = 6

    /// Writes `text` as a JSON string, at most `text.utf8.count * maxBytesPerByte + 2` bytes.
    /// Escaping byte by byte is the same as scalar by scalar: every byte of a multi-byte
    /// scalar is 0x80 or above, and only ASCII is ever escaped. Most text (every log field
    /// but a hostile one) needs no escape, and is copied eight bytes at a time.
    static func write(quoting text: String, to writer: inout ByteWriter) {
        writer.write(UInt8(ascii: "\""))
        writer.write(text, escaping: needsEscape, words: anyNeedsEscape) { byte, writer in
            writer.write(UInt8(ascii: "\\"))
            switch byte {
            case UInt8(ascii: "\n"): writer.write(UInt8(ascii: "n"))
            case UInt8(ascii: "\r"): writer.write(UInt8(ascii: "r"))
            case UInt8(ascii: "\t"): writer.write(UInt8(ascii: "t"))
            case ..<0x20:
                writer.write("u00")
                writer.write(hexDigit(byte >> 4))
                writer.write(hexDigit(byte & 0xF))
            default:
                writer.write(byte)  // `"` or `\`
            }
        }
        writer.write(UInt8(ascii: "\""))
    }

    /// Whether a byte is escaped: `"`, `\\` or a control character.
    @inline(__always)
    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20
    }

    /// Whether any of the eight bytes of `word` is `"`, `\\` or a control character (below
    /// 0x20), by the exact tests for a byte below a bound and for a zero byte (after an
    /// XOR with the byte looked for), done on all eight at once.
    @inline(__always)
    private static func anyNeedsEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        func hasZeroByte(_ value: UInt64) -> Bool { (value &- ones) & ~value & highBits != 0 }
        let hasControl = (word &- 0x2020_2020_2020_2020) & ~word & highBits != 0
        return hasControl || hasZeroByte(word ^ 0x2222_2222_2222_2222) || hasZeroByte(word ^ 0x5C5C_5C5C_5C5C_5C5C)
    }

    /// The lowercase hexadecimal digit of a value from 0 to 15.
    @inline(__always)
    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") - 10 + value
    }
}
