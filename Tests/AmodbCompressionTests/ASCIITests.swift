import Testing

@testable import AmodbCompression

struct ASCIITests {
    /// RFC 9110 §5.6.2, spelled out, against the two masks the reader tests bytes with.
    @Test
    func tokenCharactersAreExactlyTheRFCsTchar() {
        let tchar = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)
        for byte in UInt8.min...UInt8.max {
            #expect(ASCII.isTokenCharacter(byte) == tchar.contains(byte), "byte \(byte)")
        }
    }

    @Test
    func lowercasingFoldsOnlyTheLettersAToZ() {
        for byte in UInt8.min...UInt8.max {
            let expected = (0x41...0x5A).contains(byte) ? byte + 0x20 : byte
            #expect(ASCII.lowercased(byte) == expected, "byte \(byte)")
        }
    }
}
