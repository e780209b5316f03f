/// Writing JSON text by hand where a `JSONEncoder` per call would cost too much (error
/// bodies under a flood, log lines): one escaping rule for both.
enum JSONText {
    /// `text` as a JSON string: quoted, with `"`, `\\` and control characters escaped (RFC 8259 §7).
    static func quoted(_ text: String) -> String {
        var text = text
        let bytes = text.withUTF8 { utf8 in
            [UInt8](unsafeUninitializedCapacity: utf8.count * maxBytesPerByte + 2) { buffer, count in
                count = write(quoting: utf8, to: buffer.baseAddress!)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Most bytes one byte of text becomes (`\u001f`).
    static let maxBytesPerByte = 6

    /// Writes UTF-8 `bytes` as a JSON string at `output`, which has room for
    /// `bytes.count * maxBytesPerByte + 2`; returns how many bytes it wrote. Escaping byte
    /// by byte is the same as scalar by scalar: every byte of a multi-byte scalar is 0x80
    /// or above, and only ASCII is ever escaped.
    static func write(quoting bytes: UnsafeBufferPointer<UInt8>, to output: UnsafeMutablePointer<UInt8>) -> Int {
        var next = output
        func put(_ byte: UInt8) {
            next.pointee = byte
            next += 1
        }
        put(UInt8(ascii: "\""))
        // Most text (every log field but a hostile one) needs no escape: it is checked and
        // copied eight bytes at a time, then byte by byte up to the first byte to escape.
        var plain = 0
        if let base = bytes.baseAddress {
            let source = UnsafeRawPointer(base)
            let target = UnsafeMutableRawPointer(next)
            while plain + 8 <= bytes.count {
                let word = source.loadUnaligned(fromByteOffset: plain, as: UInt64.self)
                if needsEscape(word) { break }
                target.storeBytes(of: word, toByteOffset: plain, as: UInt64.self)
                plain += 8
            }
            while plain < bytes.count {
                let byte = base[plain]
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
                next[plain] = byte
                plain += 1
            }
        }
        next += plain
        if plain < bytes.count {
            let hex = Array("0123456789abcdef".utf8)
            for byte in bytes[plain...] {
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                    put(UInt8(ascii: "\\"))
                    put(byte)
                case UInt8(ascii: "\n"):
                    put(UInt8(ascii: "\\"))
                    put(UInt8(ascii: "n"))
                case UInt8(ascii: "\r"):
                    put(UInt8(ascii: "\\"))
                    put(UInt8(ascii: "r"))
                case UInt8(ascii: "\t"):
                    put(UInt8(ascii: "\\"))
                    put(UInt8(ascii: "t"))
                case ..<0x20:
                    for escape in "\\u00".utf8 { put(escape) }
                    put(hex[Int(byte >> 4)])
                    put(hex[Int(byte & 0xF)])
                default:
                    put(byte)
                }
            }
        }
        put(UInt8(ascii: "\""))
        return next - output
    }

    /// Whether any of the eight bytes of `word` is `"`, `\\` or a control character (below
    /// 0x20), by the exact tests for a byte below a bound and for a zero byte (after an
    /// XOR with the byte looked for), done on all eight at once.
    @inline(__always)
    private static func needsEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        func hasZeroByte(_ value: UInt64) -> Bool { (value &- ones) & ~value & highBits != 0 }
        let hasControl = (word &- 0x2020_2020_2020_2020) & ~word & highBits != 0
        return hasControl || hasZeroByte(word ^ 0x2222_2222_2222_2222) || hasZeroByte(word ^ 0x5C5C_5C5C_5C5C_5C5C)
    }
}
