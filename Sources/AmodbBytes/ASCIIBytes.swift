/// ASCII read on raw UTF-8 bytes: the character classes of RFC 9110 (§5.6.2's `tchar`,
/// §5.6.3's white space), case folding, and one way to compare bytes with a literal. The
/// HTTP parser, the `Accept-Encoding` reader and the proxy's path and query readers all read
/// bytes through here, so each rule is written once.
///
/// Everything is `@inlinable` and public (the target is internal to the package all the
/// same: no product exports it): these run on every byte of every request, and a call across
/// the module boundary would cost more than the test itself; a `package` function's body was
/// measured not to be inlined into the proxy (each of these a call, 800 instructions a hit:
/// docs/performance.md, "Invariants"). Constants are literals, not
/// `UInt8(ascii:)`, so that they need no lazy initialisation on the hit path.
public enum ASCIIBytes {
    /// `tchar` (RFC 9110 §5.6.2): the characters a method, a field name or a coding name is
    /// made of. Read from two 64-bit masks, a bit per ASCII byte (`!#$%&'*+-.` and digits
    /// below 64; letters and ``^_`|~`` from 64): every byte of every method and field name
    /// passes here, and a chain of range tests cost several times as much. Checked against
    /// the RFC's list by `ASCIIBytesTests`.
    @inlinable @inline(__always)
    public static func isToken(_ byte: UInt8) -> Bool {
        byte < 64
            ? (0x03FF_6CFA_0000_0000 as UInt64) >> UInt64(byte) & 1 == 1
            : byte < 128 && (0x57FF_FFFF_C7FF_FFFE as UInt64) >> UInt64(byte - 64) & 1 == 1
    }

    /// OWS: space or horizontal tab (RFC 9110 §5.6.3).
    @inlinable @inline(__always)
    public static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09
    }

    /// `byte` with A–Z folded to a–z.
    @inlinable @inline(__always)
    public static func lowercased(_ byte: UInt8) -> UInt8 {
        byte &- 0x41 < 26 ? byte | 0x20 : byte
    }

    /// Whether `bytes` are exactly a literal's.
    @inlinable @inline(__always)
    public static func equals(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        bytes.count == literal.utf8CodeUnitCount && startsWith(bytes, literal)
    }

    /// Whether `bytes` start with a literal's bytes.
    @inlinable @inline(__always)
    public static func startsWith(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard bytes.count >= count else { return false }
        let text = literal.utf8Start
        for index in 0..<count where bytes[index] != text[index] { return false }
        return true
    }

    /// Whether `bytes[start..<end]` spell `lowercase` (ASCII, lower case), ignoring case.
    @inlinable @inline(__always)
    public static func equalsIgnoringCase(
        _ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int, _ lowercase: StaticString
    ) -> Bool {
        guard end - start == lowercase.utf8CodeUnitCount else { return false }
        let expected = lowercase.utf8Start
        for offset in 0..<(end - start) where lowercased(bytes[start + offset]) != expected[offset] {
            return false
        }
        return true
    }

    /// Whether a string's UTF-8 is exactly `bytes` (read in place, not through the view's
    /// iterator). Always inlined: called in loops over short lists (parameter names, the base
    /// languages), where the length check alone rejects most, a call would cost more than it.
    @inlinable @inline(__always)
    public static func utf8(of text: String, equals bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard text.utf8.count == bytes.count else { return false }
        return text.utf8.withContiguousStorageIfAvailable { stored in
            for index in 0..<stored.count where stored[index] != bytes[index] { return false }
            return true
        } ?? text.utf8.elementsEqual(bytes)
    }
}
