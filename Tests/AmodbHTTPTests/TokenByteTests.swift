import Testing

@testable import AmodbHTTP

/// `isTokenByte` reads bit masks: every byte must be classified as RFC 9110 §5.6.2 lists
/// `tchar` (letters, digits and ``!#$%&'*+-.^_`|~``), and nothing else.
struct TokenByteTests {
    @Test func everyByteIsATokenByteExactlyWhenTheRFCListsIt() {
        let symbols = Set("!#$%&'*+-.^_`|~".utf8)
        for value in 0...255 {
            let byte = UInt8(value)
            let listed =
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || symbols.contains(byte)
            #expect(isTokenByte(byte) == listed, "byte \(value)")
        }
    }
}
