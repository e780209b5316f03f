/// The bytes and character classes the `Accept-Encoding` reader needs (RFC 9110 §5.6),
/// on raw UTF-8 so that reading a field allocates nothing. Constants are literals, not
/// `UInt8(ascii:)`, so that they need no lazy initialisation on the hit path.
enum ASCII {
    static let comma: UInt8 = 0x2C  // ,
    static let semicolon: UInt8 = 0x3B  // ;
    static let equals: UInt8 = 0x3D  // =
    static let dot: UInt8 = 0x2E  // .
    static let star: UInt8 = 0x2A  // *
    static let zero: UInt8 = 0x30  // 0
    static let one: UInt8 = 0x31  // 1
    static let q: UInt8 = 0x71  // q

    /// OWS: space or horizontal tab (§5.6.3).
    @inline(__always)
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09
    }

    /// `tchar` (§5.6.2) for bytes 0–63: `!#$%&'*+-.` and digits.
    private static let tokenCharactersBelow64: UInt64 = 0x03FF_6CFA_0000_0000
    /// `tchar` for bytes 64–127: letters and `^_`|~`.
    private static let tokenCharactersFrom64: UInt64 = 0x57FF_FFFF_C7FF_FFFE

    /// `tchar` (§5.6.2): the characters a token such as a coding name is made of,
    /// tested against two 64-bit masks.
    @inline(__always)
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        if byte < 64 { return tokenCharactersBelow64 >> byte & 1 == 1 }
        if byte < 128 { return tokenCharactersFrom64 >> (byte - 64) & 1 == 1 }
        return false
    }

    /// `byte` with A–Z folded to a–z.
    @inline(__always)
    static func lowercased(_ byte: UInt8) -> UInt8 {
        byte &- 0x41 < 26 ? byte | 0x20 : byte
    }

    /// Whether `bytes[start..<end]` spells `lowercase` (ASCII, lower case), ignoring case.
    @inline(__always)
    static func equalsIgnoringCase(
        _ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int, _ lowercase: StaticString
    ) -> Bool {
        guard end - start == lowercase.utf8CodeUnitCount else { return false }
        let expected = lowercase.utf8Start
        for offset in 0..<(end - start) where lowercased(bytes[start + offset]) != expected[offset] {
            return false
        }
        return true
    }
}
