import AmodbBytes
import Testing

struct ASCIIBytesTests {
    /// RFC 9110 §5.6.2, spelled out, against the two masks bytes are tested with: every byte
    /// is a `tchar` exactly when the RFC lists it.
    @Test func tokenBytesAreExactlyTheRFCsTchar() {
        let tchar = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)
        for byte in UInt8.min...UInt8.max {
            #expect(ASCIIBytes.isToken(byte) == tchar.contains(byte), "byte \(byte)")
        }
    }

    @Test func lowercasingFoldsOnlyTheLettersAToZ() {
        for byte in UInt8.min...UInt8.max {
            let expected = (0x41...0x5A).contains(byte) ? byte + 0x20 : byte
            #expect(ASCIIBytes.lowercased(byte) == expected, "byte \(byte)")
        }
    }

    @Test func whitespaceIsSpaceAndTabOnly() {
        for byte in UInt8.min...UInt8.max {
            #expect(ASCIIBytes.isWhitespace(byte) == (byte == 0x20 || byte == 0x09), "byte \(byte)")
        }
    }

    /// The literal comparisons against `Array`'s, on every prefix of a few texts.
    @Test(arguments: ["", "/", "/movie/", "/movie/550", "/MOVIE/", "/movi", "é/movie/"])
    func literalComparisonsAgreeWithArrays(text: String) {
        let literals: [(StaticString, String)] = [("/movie/", "/movie/"), ("", ""), ("/", "/")]
        let bytes = text.utf8.span
        let array = Array(text.utf8)
        for (literal, spelled) in literals {
            #expect(ASCIIBytes.equals(bytes, literal) == array.elementsEqual(spelled.utf8))
            #expect(ASCIIBytes.startsWith(bytes, literal) == array.starts(with: spelled.utf8))
            #expect(
                ASCIIBytes.equalsIgnoringCase(bytes, 0, bytes.count, literal)
                    == array.map(ASCIIBytes.lowercased).elementsEqual(spelled.utf8))
            #expect(ASCIIBytes.utf8(of: spelled, equals: bytes) == array.elementsEqual(spelled.utf8))
        }
    }
}
