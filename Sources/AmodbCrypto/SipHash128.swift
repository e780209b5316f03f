/// SipHash-2-4 with a 128-bit output (Aumasson and Bernstein, "SipHash: a fast short-input
/// PRF", and the reference implementation's 128-bit variant): a keyed pseudorandom function
/// in plain Swift. Without the key, its outputs cannot be predicted or made to collide, so
/// a digest under a key the process drew at random names a byte string as safely as a MAC
/// would, at a fraction of libcrypto's HMAC-SHA256 call cost on the short strings it is for.
/// Its description, debug description and mirror are redacted, as the key is a secret.
public struct SipHash128: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// A 128-bit digest, as the two little-endian words of the output.
    public struct Digest: Sendable, Hashable {
        public let low: UInt64
        public let high: UInt64

        /// A digest from its two words.
        public init(low: UInt64, high: UInt64) {
            self.low = low
            self.high = high
        }

        /// The 16 output bytes in the reference implementation's order.
        public var bytes: [UInt8] {
            (0..<8).map { UInt8(truncatingIfNeeded: low >> (8 * $0)) }
                + (0..<8).map { UInt8(truncatingIfNeeded: high >> (8 * $0)) }
        }
    }

    private let k0: UInt64
    private let k1: UInt64

    /// A function keyed with 16 bytes (the reference implementation's key layout: two
    /// little-endian words).
    public init(key: [UInt8]) {
        precondition(key.count == 16, "a SipHash key is 16 bytes")
        k0 = Self.word(key, 0)
        k1 = Self.word(key, 8)
    }

    /// A function keyed at random (`SystemRandomNumberGenerator`): its digests mean something
    /// only inside this process.
    public init() {
        var generator = SystemRandomNumberGenerator()
        k0 = generator.next()
        k1 = generator.next()
    }

    /// The digest of `message`.
    public func digest(_ message: UnsafeRawBufferPointer) -> Digest {
        var v0: UInt64 = k0 ^ 0x736f_6d65_7073_6575
        var v1: UInt64 = k1 ^ 0x646f_7261_6e64_6f6d ^ 0xee
        var v2: UInt64 = k0 ^ 0x6c79_6765_6e65_7261
        var v3: UInt64 = k1 ^ 0x7465_6462_7974_6573

        @inline(__always) func round() {
            v0 &+= v1
            v1 = v1.rotatedLeft(13)
            v1 ^= v0
            v0 = v0.rotatedLeft(32)
            v2 &+= v3
            v3 = v3.rotatedLeft(16)
            v3 ^= v2
            v0 &+= v3
            v3 = v3.rotatedLeft(21)
            v3 ^= v0
            v2 &+= v1
            v1 = v1.rotatedLeft(17)
            v1 ^= v2
            v2 = v2.rotatedLeft(32)
        }

        let count = message.count
        let whole = count & ~7
        var offset = 0
        while offset < whole {
            let m = UInt64(littleEndian: message.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            v3 ^= m
            round()
            round()
            v0 ^= m
            offset += 8
        }
        var last = UInt64(truncatingIfNeeded: count) << 56
        var shift: UInt64 = 0
        while offset < count {
            last |= UInt64(message[offset]) << shift
            shift += 8
            offset += 1
        }
        v3 ^= last
        round()
        round()
        v0 ^= last

        v2 ^= 0xee
        round()
        round()
        round()
        round()
        let low = v0 ^ v1 ^ v2 ^ v3
        v1 ^= 0xdd
        round()
        round()
        round()
        round()
        return Digest(low: low, high: v0 ^ v1 ^ v2 ^ v3)
    }

    /// The digest of `message`'s bytes.
    public func digest(_ message: Span<UInt8>) -> Digest {
        message.withUnsafeBytes { digest($0) }
    }

    /// The same, of any bytes.
    public func digest(_ message: some Collection<UInt8>) -> Digest {
        if let digest = message.withContiguousStorageIfAvailable({ digest(UnsafeRawBufferPointer($0)) }) {
            return digest
        }
        return Array(message).withUnsafeBytes { digest($0) }
    }

    private static func word(_ bytes: [UInt8], _ start: Int) -> UInt64 {
        (0..<8).reduce(0) { word, index in word | UInt64(bytes[start + index]) << (8 * index) }
    }

    public var description: String { "SipHash128(<redacted>)" }
    public var debugDescription: String { "SipHash128(<redacted>)" }
    /// No children: `dump` and reflection show nothing of the key.
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}

extension UInt64 {
    /// The bits rotated `count` places towards the most significant end.
    @inline(__always)
    fileprivate func rotatedLeft(_ count: UInt64) -> UInt64 {
        (self << count) | (self >> (64 - count))
    }
}
