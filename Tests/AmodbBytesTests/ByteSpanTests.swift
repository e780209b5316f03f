import AmodbBytes
import Testing

/// The span readers against `Array`'s own answers, on texts and on every sub-range of them.
struct ByteSpanTests {
    static let texts = [
        "", "a", "GET /3/movie/550 HTTP/1.1", "a=1&b=2&a=3", "  spaced  ", "é€ and ascii", "////", "x/y/z?q",
    ]

    @Test(arguments: texts)
    func searchesAgreeWithArrays(text: String) {
        let bytes = text.utf8.span
        let array = Array(text.utf8)
        for byte in Set(array + [0, UInt8(ascii: "/"), UInt8(ascii: "=")]) {
            #expect(bytes.firstIndex(of: byte) == array.firstIndex(of: byte), "\(byte) in \(text)")
            #expect(bytes.lastIndex(of: byte) == array.lastIndex(of: byte), "\(byte) in \(text)")
            #expect(bytes.contains(byte) == array.contains(byte))
            for start in 0...array.count {
                for end in start...array.count {
                    let expected = array[start..<end].firstIndex(of: byte)
                    #expect(bytes.firstIndex(of: byte, from: start, to: end) == expected)
                }
            }
        }
        #expect(bytes.allSatisfy { $0 < 0x80 } == array.allSatisfy { $0 < 0x80 })
        #expect(bytes.decodedString() == text)
        #expect(bytes.validatedString() == text)
        #expect(bytes.array() == array)
        // Computed first: `#expect` cannot take apart a call on a span (it is not escapable).
        let equalsArray = bytes.elementsEqual(array)
        let equalsSpan = bytes.elementsEqual(text.utf8.span)
        let equalsLonger = bytes.elementsEqual(array + [0])
        let equalsLongerSpan = bytes.elementsEqual((text + "!").utf8.span)
        #expect(equalsArray && equalsSpan && !equalsLonger && !equalsLongerSpan)
    }

    @Test func invalidUTF8IsRepairedOrRefused() {
        let bytes: [UInt8] = [0x61, 0xFF, 0x62]
        #expect(bytes.span.decodedString() == "a\u{FFFD}b")
        #expect(bytes.span.validatedString() == nil)
    }

    /// The word scans stop no later than the first byte they must not pass, and leave fewer
    /// than eight bytes or a word holding such a byte: checked at every position of one
    /// such byte in runs of every length up to 40, for both scans.
    @Test func wordScansStopAtTheFirstByteThatMatters() {
        for length in 0...40 {
            for position in -1..<length {
                var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                if position >= 0 { bytes[position] = UInt8(ascii: "\r") }
                for start in 0...length {
                    let stop = position >= start ? position : length
                    let below = bytes.span.skippingWords(withNoByteBelow: 0x0E, from: start, to: length)
                    #expect(below <= stop && (stop - below < 8 || length - below < 8), "\(length) \(position) \(start)")
                    #expect((below - start) % 8 == 0)
                    let printable = bytes.span.skippingWords(ofPrintableASCIIFrom: start, to: length)
                    #expect(printable <= stop && (stop - printable < 8 || length - printable < 8))
                    #expect((printable - start) % 8 == 0)
                }
            }
        }
    }

    /// Every byte value is judged by the word tests as by a byte-at-a-time test.
    @Test func wordTestsAgreeWithByteTests() {
        for byte in UInt8.min...UInt8.max {
            let word = UInt64(byte) | 0x6161_6161_6161_6100
            #expect(ASCIIBytes.hasByteBelow(0x0E, word, 0xFFFF_FFFF_FFFF_FFFF) == (byte < 0x0E), "byte \(byte)")
            #expect(ASCIIBytes.isPrintableASCII(word, 0x2020_2020_2020_2020) == (0x20...0x7E).contains(byte))
        }
    }
}
