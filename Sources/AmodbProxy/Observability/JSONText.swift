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
        // Most text (every log field but a hostile one) needs no escape: short text is
        // copied as it is scanned, longer text scanned once and copied with `memcpy`.
        var plain = 0
        if bytes.count <= 64 {
            while plain < bytes.count {
                let byte = bytes[plain]
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
                next[plain] = byte
                plain += 1
            }
        } else if let base = bytes.baseAddress,
            !bytes.contains(where: { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") || $0 < 0x20 })
        {
            next.update(from: base, count: bytes.count)
            plain = bytes.count
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
}
