package import AmodbAttest

/// Writes CBOR (RFC 8949) as App Attest does, for tests that make or change attestations
/// and assertions: definite lengths, every argument in its shortest form, and map keys in
/// length-first then bytewise order (RFC 8949 §4.2.3), so what `CBORReader` reads is
/// written back byte for byte when it came from this writer.
package enum CBORWriter {
    /// The encoding of `value`.
    package static func encode(_ value: CBORValue) -> [UInt8] {
        var output: [UInt8] = []
        write(value, to: &output)
        return output
    }

    private static func write(_ value: CBORValue, to output: inout [UInt8]) {
        switch value {
        case .unsigned(let number):
            writeHead(major: 0, argument: number, to: &output)
        case .negative(let number):
            writeHead(major: 1, argument: number, to: &output)
        case .bytes(let bytes):
            writeHead(major: 2, argument: UInt64(bytes.count), to: &output)
            output += bytes
        case .text(let text):
            writeHead(major: 3, argument: UInt64(text.utf8.count), to: &output)
            output += text.utf8
        case .array(let elements):
            writeHead(major: 4, argument: UInt64(elements.count), to: &output)
            for element in elements { write(element, to: &output) }
        case .map(let entries):
            writeHead(major: 5, argument: UInt64(entries.count), to: &output)
            let keys = entries.keys.sorted { a, b in
                a.utf8.count != b.utf8.count ? a.utf8.count < b.utf8.count : a.utf8.lexicographicallyPrecedes(b.utf8)
            }
            for key in keys {
                write(.text(key), to: &output)
                write(entries[key]!, to: &output)
            }
        }
    }

    /// An initial byte and its argument in the shortest form (RFC 8949 §3, §4.2.1).
    package static func writeHead(major: UInt8, argument: UInt64, to output: inout [UInt8]) {
        let (information, bytes): (UInt8, Int) =
            switch argument {
            case 0..<24: (UInt8(argument), 0)
            case 24...0xFF: (24, 1)
            case 0x100...0xFFFF: (25, 2)
            case 0x1_0000...0xFFFF_FFFF: (26, 4)
            default: (27, 8)
            }
        output.append(major << 5 | information)
        for index in stride(from: bytes - 1, through: 0, by: -1) {
            output.append(UInt8(truncatingIfNeeded: argument >> (8 * UInt64(index))))
        }
    }
}
