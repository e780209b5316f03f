/// ASCII read on UTF-8 bytes: the character classes of RFC 9110 (§5.6.2's `tchar`, §5.6.3's
/// white space), case folding, and one way to compare bytes with a literal. The HTTP parser,
/// the `Accept-Encoding` reader and the proxy's path and query readers all read bytes
/// through here, so each rule is written once. Bytes are read as `Span`s: bounds checked,
/// and no pointer outlives the bytes it points into.
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
    public static func equals(_ bytes: Span<UInt8>, _ literal: StaticString) -> Bool {
        bytes.count == literal.utf8CodeUnitCount && startsWith(bytes, literal)
    }

    /// Whether `bytes` start with a literal's bytes.
    @inlinable @inline(__always)
    public static func startsWith(_ bytes: Span<UInt8>, _ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard bytes.count >= count else { return false }
        let text = literal.utf8Start
        for index in 0..<count where bytes[index] != text[index] { return false }
        return true
    }

    /// Whether `bytes[start..<end]` spell `lowercase` (ASCII, lower case), ignoring case.
    @inlinable @inline(__always)
    public static func equalsIgnoringCase(
        _ bytes: Span<UInt8>, _ start: Int, _ end: Int, _ lowercase: StaticString
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
    public static func utf8(of text: String, equals bytes: Span<UInt8>) -> Bool {
        guard text.utf8.count == bytes.count else { return false }
        // The string's storage in place: asking a `String` for its span costs more than
        // this whole comparison of a few bytes.
        return text.utf8.withContiguousStorageIfAvailable { stored in
            for index in 0..<stored.count where stored[index] != bytes[index] { return false }
            return true
        } ?? bytes.elementsEqual(text.utf8)
    }

    /// Whether any byte of two words is below `limit` (at most 128). A byte below it borrows
    /// in its subtraction and so sets its top bit, where the byte's own top bit was clear; a
    /// borrow carried into the next byte comes only from a byte already found, so the answer
    /// for a word is exact ("Bit Twiddling Hacks", `hasless`). Two words a test: a loop's
    /// overhead is paid once for sixteen bytes (pass all ones as the second for one word).
    @inlinable @inline(__always)
    public static func hasByteBelow(_ limit: UInt8, _ first: UInt64, _ second: UInt64) -> Bool {
        let subtrahend = 0x0101_0101_0101_0101 &* UInt64(limit)
        return ((first &- subtrahend) & ~first | (second &- subtrahend) & ~second) & 0x8080_8080_8080_8080 != 0
    }

    /// Whether every byte of two words is printable ASCII, 0x20 to 0x7E: none is below 0x20
    /// (as `hasByteBelow`), and none is above 0x7E (adding 1 carries into a byte's top bit
    /// exactly when it is 0x7F or more, or the top bit was set already; "Bit Twiddling
    /// Hacks", `hasmore`). Pass spaces as the second word for one.
    @inlinable @inline(__always)
    public static func isPrintableASCII(_ first: UInt64, _ second: UInt64) -> Bool {
        func outside(_ word: UInt64) -> UInt64 {
            ((word &- 0x2020_2020_2020_2020) & ~word) | (word &+ 0x0101_0101_0101_0101) | word
        }
        return (outside(first) | outside(second)) & 0x8080_8080_8080_8080 == 0
    }
}
