/// The bytes the `Accept-Encoding` reader looks for (RFC 9110 §5.6), on raw UTF-8 so that
/// reading a field allocates nothing; the character classes are `AmodbBytes`'s. Constants
/// are literals, not `UInt8(ascii:)`, so that they need no lazy initialisation on the hit path.
enum ASCII {
    static let comma: UInt8 = 0x2C  // ,
    static let semicolon: UInt8 = 0x3B  // ;
    static let equals: UInt8 = 0x3D  // =
    static let dot: UInt8 = 0x2E  // .
    static let star: UInt8 = 0x2A  // *
    static let zero: UInt8 = 0x30  // 0
    static let one: UInt8 = 0x31  // 1
    static let q: UInt8 = 0x71  // q
}
