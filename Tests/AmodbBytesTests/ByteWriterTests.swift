import AmodbBytes
import Testing

/// `ByteWriter` writes exactly the bytes it is given, counts what it would write (numbers at
/// their widest), and checks its room before each write: a write that does not fit stops
/// the process before it touches memory past the room.
struct ByteWriterTests {
    /// Every piece a writer takes, once each: what is counted must be what is written, but
    /// for a number, counted at its widest.
    private static func writeEveryPiece(_ writer: inout ByteWriter, number: Int) {
        writer.write(UInt8(ascii: "<"))
        writer.write("literal")
        writer.write("x")
        writer.write("café ☕︎")
        writer.write(String(repeating: "long ", count: 10))
        writer.write(Array("array".utf8))
        writer.write(Array("-slice-".utf8)[1...5])
        writer.write(decimal: 7, width: 3)
        writer.write(decimal: number)
        writer.write(UInt8(ascii: ">"))
    }

    @Test(
        "What is counted is what is written, a number at its widest",
        arguments: [0, 7, -7, 99, 100, 1795, -1800, Int.max, Int.min])
    func countingEqualsWriting(number: Int) {
        var counter = ByteWriter.counting
        Self.writeEveryPiece(&counter, number: number)
        #expect(counter.isCounting)
        #expect(counter.remaining == Int.max)

        var bytes: [UInt8] = []
        let written = ByteWriter.append(to: &bytes, atMost: counter.count) { writer -> Int in
            Self.writeEveryPiece(&writer, number: number)
            #expect(!writer.isCounting)
            #expect(writer.remaining == counter.count - writer.count)
            return writer.count
        }
        let expected =
            "<literalxcafé ☕︎" + String(repeating: "long ", count: 10) + "arrayslice007" + String(number) + ">"
        #expect(String(decoding: bytes, as: UTF8.self) == expected)
        #expect(written == bytes.count)
        // The number is the only piece counted for more than it takes.
        #expect(counter.count - bytes.count == ByteWriter.maxNumberBytes - String(number).utf8.count)
    }

    @Test(
        "Numbers are written as their decimal digits",
        arguments: [0, 7, 10, 99, 100, 1795, -1, -9, -10, -1800, 1 << 62, Int.max, Int.min, Int.min + 1])
    func numbersAreWrittenInDecimal(value: Int) {
        var bytes: [UInt8] = []
        ByteWriter.append(to: &bytes, atMost: ByteWriter.maxNumberBytes) { $0.write(decimal: value) }
        #expect(String(decoding: bytes, as: UTF8.self) == String(value))
        var appended: [UInt8] = Array("n=".utf8)
        ByteWriter.append(to: &appended, atMost: ByteWriter.maxNumberBytes) { $0.write(decimal: value) }
        #expect(String(decoding: appended, as: UTF8.self) == "n=" + String(value), "appended after what is there")
    }

    @Test(
        "Fixed-width numbers are zero-padded to their width",
        arguments: [
            (0, 2, "00"), (5, 2, "05"), (59, 2, "59"), (7, 3, "007"), (999, 3, "999"), (2026, 4, "2026"),
            (0, 4, "0000"), (12, 1, "2"),
        ])
    func fixedWidthNumbersArePadded(value: Int, width: Int, expected: String) {
        var bytes: [UInt8] = []
        ByteWriter.append(to: &bytes, atMost: width) { $0.write(decimal: value, width: width) }
        #expect(String(decoding: bytes, as: UTF8.self) == expected)
    }

    /// Short copies go by overlapping words, long ones by `memmove`: every length comes out
    /// exact, and nothing is written past it.
    @Test func bytesOfEveryLengthAreCopiedExactly() {
        for count in 0...40 {
            let text = Array((0..<count).map { UInt8(ascii: "a") + UInt8($0 % 26) })
            var room = [UInt8](repeating: UInt8(ascii: "."), count: 48)
            let written = ByteWriter.overwriting(&room) { writer -> Int in
                writer.write(text)
                writer.write(UInt8(ascii: "|"))
                return writer.count
            }
            #expect(written == count + 1)
            #expect(Array(room[..<written]) == text + [UInt8(ascii: "|")])
            #expect(room[written...].allSatisfy { $0 == UInt8(ascii: ".") }, "\(count)")
        }
    }

    @Test func writesThatFillTheRoomExactlyAreWritten() {
        var room = [UInt8](repeating: 0, count: 11)
        let remaining = ByteWriter.overwriting(&room) { writer -> Int in
            writer.write("four")
            #expect(writer.remaining == 7)
            writer.write(decimal: -12345)
            writer.write(UInt8(ascii: "!"))
            return writer.remaining
        }
        #expect(remaining == 0)
        #expect(String(decoding: room, as: UTF8.self) == "four-12345!")
    }

    /// Text is copied as it is up to the first byte to escape, by words and then bytes, and
    /// from there on byte by byte; every escape and every byte after one is checked.
    @Test(arguments: ["", "plain", "a text longer than two words", "tab\there", "0123456789abcde\t", "\t\t", "x#"])
    func escapedTextIsCopiedUpToItsFirstEscape(text: String) {
        let isSpecial: (UInt8) -> Bool = { $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "#") }
        var bytes: [UInt8] = []
        ByteWriter.append(to: &bytes, atMost: text.utf8.count * 2) { writer in
            writer.write(
                text, escaping: isSpecial,
                words: { word in (0..<8).contains { isSpecial(UInt8(truncatingIfNeeded: word >> ($0 * 8))) } },
                with: { byte, writer in
                    writer.write(UInt8(ascii: "\\"))
                    writer.write(byte == UInt8(ascii: "\t") ? UInt8(ascii: "t") : byte)
                })
        }
        let expected = String(
            decoding: text.utf8.flatMap { byte -> [UInt8] in
                switch byte {
                case UInt8(ascii: "\t"): Array("\\t".utf8)
                case UInt8(ascii: "#"): Array("\\#".utf8)
                default: [byte]
                }
            }, as: UTF8.self)
        #expect(String(decoding: bytes, as: UTF8.self) == expected)

        var counter = ByteWriter.counting
        counter.write(text, escaping: isSpecial, words: { _ in true }, with: { _, writer in writer.write("\\x") })
        #expect(counter.count == expected.utf8.count)
    }

    @Test func aWritePastTheRoomStopsTheProcessBeforeItIsWritten() async {
        // The room is the start of a larger allocation: a write past it would land in memory
        // that is there, so only a check made before the write stops the process.
        await #expect(processExitsWith: .failure) {
            let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
            var writer = ByteWriter(into: UnsafeMutableRawBufferPointer(rebasing: memory[..<4]))
            writer.write("four")
            writer.write(UInt8(ascii: "!"))
        }
        await #expect(processExitsWith: .failure) {
            let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
            var writer = ByteWriter(into: UnsafeMutableRawBufferPointer(rebasing: memory[..<3]))
            writer.write(decimal: 1234)
        }
        await #expect(processExitsWith: .failure) {
            let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
            var writer = ByteWriter(into: UnsafeMutableRawBufferPointer(rebasing: memory[..<8]))
            writer.write(String(repeating: "a", count: 9), escaping: { _ in false }, words: { _ in false }) { _, _ in }
        }
    }
}
