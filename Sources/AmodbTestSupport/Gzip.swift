/// gzip streams (RFC 1952) written by hand, so tests can send real compressed bodies
/// without a compression library: stored blocks for a plain answer, and fixed-Huffman
/// back-references for a bomb (a few KiB that inflate to many MiB).
package enum Gzip {
    /// `bytes` as a valid gzip stream, uncompressed (DEFLATE stored blocks, RFC 1951 §3.2.4).
    package static func stored(_ bytes: [UInt8]) -> [UInt8] {
        var writer = BitWriter()
        var offset = 0
        repeat {
            let count = min(65535, bytes.count - offset)
            writer.bits(offset + count == bytes.count ? 1 : 0, count: 1)  // BFINAL
            writer.bits(0, count: 2)  // BTYPE: stored
            writer.alignToByte()
            writer.bytes([UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)])
            writer.bytes(Array(bytes[offset..<offset + count]))
            offset += count
        } while offset < bytes.count
        return wrap(writer.output, crc: crc32(bytes), size: bytes.count)
    }

    /// A valid gzip stream of `size` zero bytes, about `size / 160` bytes long: one
    /// literal zero, then copies of 258 bytes at distance 1 (RFC 1951 §3.2.6).
    package static func zeros(_ size: Int) -> [UInt8] {
        precondition(size > 0)
        var writer = BitWriter()
        writer.bits(1, count: 1)  // BFINAL
        writer.bits(1, count: 2)  // BTYPE: fixed Huffman codes
        writer.huffman(0x30, length: 8)  // literal 0
        var remaining = size - 1
        while remaining >= 258 {
            writer.huffman(0b1100_0101, length: 8)  // length code 285: 258 bytes
            writer.huffman(0, length: 5)  // distance code 0: distance 1
            remaining -= 258
        }
        for _ in 0..<remaining { writer.huffman(0x30, length: 8) }
        writer.huffman(0, length: 7)  // end of block (256)
        writer.alignToByte()
        var crc: UInt32 = 0xFFFF_FFFF
        for _ in 0..<size { crc = table[Int(crc & 0xFF)] ^ (crc >> 8) }
        return wrap(writer.output, crc: ~crc, size: size)
    }

    private static func wrap(_ deflated: [UInt8], crc: UInt32, size: Int) -> [UInt8] {
        let header: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF]
        let isize = UInt32(truncatingIfNeeded: size)
        return header + deflated + littleEndian(crc) + littleEndian(isize)
    }

    private static func littleEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value & 0xFF), UInt8((value >> 8) & 0xFF), UInt8((value >> 16) & 0xFF), UInt8(value >> 24)]
    }

    /// CRC-32 as gzip uses it (the IEEE polynomial, reflected).
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return ~crc
    }

    private static let table: [UInt32] = (0..<256).map { (index: UInt32) in
        var value = index
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    /// DEFLATE's bit order: values least significant bit first, Huffman codes most
    /// significant bit first (RFC 1951 §3.1.1).
    private struct BitWriter {
        var output: [UInt8] = []
        private var current: UInt32 = 0
        private var used = 0

        mutating func bits(_ value: Int, count: Int) {
            for bit in 0..<count {
                current |= UInt32((value >> bit) & 1) << used
                used += 1
                if used == 8 { flush() }
            }
        }

        mutating func huffman(_ code: Int, length: Int) {
            for bit in stride(from: length - 1, through: 0, by: -1) { bits((code >> bit) & 1, count: 1) }
        }

        mutating func alignToByte() {
            if used > 0 { flush() }
        }

        mutating func bytes(_ values: [UInt8]) {
            output.append(contentsOf: values)
        }

        private mutating func flush() {
            output.append(UInt8(current))
            current = 0
            used = 0
        }
    }
}
