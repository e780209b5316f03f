import AmodbAttest
import AmodbAttestTestSupport
import Testing

/// The CBOR reader reads what App Attest writes, and refuses every other encoding with the
/// reason it names, within its limits.
@Suite struct CBORReaderTests {
    static func read(_ bytes: [UInt8], limits: CBORReader.Limits = CBORReader.Limits()) throws(CBORError)
        -> CBORValue
    {
        try CBORReader(limits: limits).read(bytes)
    }

    @Test func readsEachKindItTakes() throws {
        #expect(try Self.read([0x00]) == .unsigned(0))
        #expect(try Self.read([0x17]) == .unsigned(23))
        #expect(try Self.read([0x18, 0x18]) == .unsigned(24))
        #expect(try Self.read([0x19, 0x01, 0x00]) == .unsigned(256))
        #expect(try Self.read([0x1A, 0x00, 0x01, 0x00, 0x00]) == .unsigned(65_536))
        #expect(
            try Self.read([0x1B, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00]) == .unsigned(4_294_967_296))
        #expect(try Self.read([0x20]) == .negative(0), "-1")
        #expect(try Self.read([0x38, 0x63]) == .negative(99), "-100")
        #expect(try Self.read([0x43, 0x01, 0x02, 0x03]) == .bytes([1, 2, 3]))
        #expect(try Self.read([0x40]) == .bytes([]))
        #expect(try Self.read([0x63, 0x66, 0x6D, 0x74]) == .text("fmt"))
        #expect(try Self.read([0x62, 0xC3, 0xA9]) == .text("é"))
        #expect(try Self.read([0x82, 0x01, 0x41, 0xFF]) == .array([.unsigned(1), .bytes([0xFF])]))
        #expect(
            try Self.read([0xA2, 0x61, 0x61, 0x01, 0x61, 0x62, 0x80])
                == .map(["a": .unsigned(1), "b": .array([])]))
    }

    @Test func writingWhatItReadGivesTheSameBytes() throws {
        let value = CBORValue.map([
            "fmt": .text("apple-appattest"),
            "attStmt": .map(["x5c": .array([.bytes([UInt8](repeating: 7, count: 300))]), "receipt": .bytes([])]),
            "authData": .bytes([UInt8](repeating: 1, count: 70)),
            "n": .negative(1_000_000), "u": .unsigned(UInt64.max),
        ])
        let bytes = CBORWriter.encode(value)
        #expect(try Self.read(bytes) == value)
        #expect(CBORWriter.encode(try Self.read(bytes)) == bytes)
    }

    /// An input the reader refuses, and why.
    struct Refusal: Sendable, CustomTestStringConvertible {
        let name: String
        let bytes: [UInt8]
        let error: CBORError
        var testDescription: String { name }
    }

    static let refusals: [Refusal] = [
        Refusal(name: "empty", bytes: [], error: .truncated),
        Refusal(name: "a byte string past the end", bytes: [0x45, 0x01, 0x02], error: .truncated),
        Refusal(name: "a two-byte length cut short", bytes: [0x59, 0x01], error: .truncated),
        Refusal(name: "a map missing its value", bytes: [0xA1, 0x61, 0x61], error: .truncated),
        Refusal(
            name: "an array claiming more items than bytes", bytes: [0x9A, 0x7F, 0xFF, 0xFF, 0xFF], error: .truncated),
        Refusal(
            name: "a map claiming more entries than bytes", bytes: [0xBA, 0x7F, 0xFF, 0xFF, 0xFF], error: .truncated),
        Refusal(
            name: "a byte string claiming 2^64 - 1 bytes",
            bytes: [0x5B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], error: .truncated),
        Refusal(name: "an indefinite-length map", bytes: [0xBF, 0xFF], error: .indefiniteLength),
        Refusal(name: "an indefinite-length array", bytes: [0x9F, 0x01, 0xFF], error: .indefiniteLength),
        Refusal(name: "an indefinite-length byte string", bytes: [0x5F, 0x41, 0x00, 0xFF], error: .indefiniteLength),
        Refusal(name: "an indefinite-length text string", bytes: [0x7F, 0x61, 0x61, 0xFF], error: .indefiniteLength),
        Refusal(name: "a lone break", bytes: [0xFF], error: .unsupported("a float or simple value")),
        Refusal(name: "trailing bytes", bytes: [0xA0, 0x00], error: .trailingBytes),
        Refusal(name: "two items", bytes: [0x01, 0x02], error: .trailingBytes),
        Refusal(name: "nine levels", bytes: [UInt8](repeating: 0x81, count: 8) + [0x80], error: .tooDeep(limit: 8)),
        Refusal(name: "a duplicate key", bytes: [0xA2, 0x61, 0x61, 0x01, 0x61, 0x61, 0x02], error: .duplicateKey),
        Refusal(name: "an integer key", bytes: [0xA1, 0x01, 0x02], error: .nonTextKey),
        Refusal(name: "a byte-string key", bytes: [0xA1, 0x41, 0x61, 0x02], error: .nonTextKey),
        Refusal(name: "23 in one more byte", bytes: [0x18, 0x17], error: .nonShortestEncoding),
        Refusal(name: "255 in two bytes", bytes: [0x19, 0x00, 0xFF], error: .nonShortestEncoding),
        Refusal(name: "65535 in four bytes", bytes: [0x1A, 0x00, 0x00, 0xFF, 0xFF], error: .nonShortestEncoding),
        Refusal(
            name: "2^32 - 1 in eight bytes", bytes: [0x1B, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF],
            error: .nonShortestEncoding),
        Refusal(
            name: "a length of 3 in one more byte", bytes: [0x58, 0x03, 0x01, 0x02, 0x03], error: .nonShortestEncoding),
        Refusal(name: "a count of 1 in one more byte", bytes: [0x98, 0x01, 0x00], error: .nonShortestEncoding),
        Refusal(name: "text that is not UTF-8", bytes: [0x62, 0xC3, 0x28], error: .invalidUTF8),
        Refusal(name: "a tag", bytes: [0xC2, 0x41, 0x01], error: .unsupported("a tag")),
        Refusal(name: "a float", bytes: [0xF9, 0x3C, 0x00], error: .unsupported("a float or simple value")),
        Refusal(name: "true", bytes: [0xF5], error: .unsupported("a float or simple value")),
        Refusal(
            name: "reserved additional information", bytes: [0x1C],
            error: .unsupported("reserved additional information")),
        Refusal(
            name: "an integer of indefinite length", bytes: [0x1F],
            error: .unsupported("reserved additional information")),
    ]

    @Test(arguments: refusals)
    func refuses(_ refusal: Refusal) {
        #expect(throws: refusal.error) { try Self.read(refusal.bytes) }
        #expect(!refusal.error.reason.isEmpty)
    }

    @Test func refusesInputLongerThanItsLimitBeforeReadingIt() throws {
        // Well-formed but one byte too long: refused for its length alone.
        let bytes = [0x59, 0x01, 0x00] + [UInt8](repeating: 0, count: 256)
        #expect(throws: CBORError.tooLarge(limit: 258)) {
            try Self.read(bytes, limits: CBORReader.Limits(maximumBytes: 258))
        }
        #expect(
            try Self.read(bytes, limits: CBORReader.Limits(maximumBytes: 259))
                == .bytes([UInt8](repeating: 0, count: 256)))
        #expect(throws: CBORError.tooLarge(limit: 64 * 1024)) {
            try Self.read([UInt8](repeating: 0, count: 64 * 1024 + 1))
        }
    }

    @Test func refusesMoreItemsThanItsLimit() throws {
        let hundred = [0x98, 0x64] + [UInt8](repeating: 0x00, count: 100)
        #expect(try Self.read(hundred, limits: CBORReader.Limits(maximumItems: 101)).array?.count == 100)
        #expect(throws: CBORError.tooManyItems(limit: 100)) {
            try Self.read(hundred, limits: CBORReader.Limits(maximumItems: 100))
        }
        let wide = [0x99, 0x03, 0xE8] + [UInt8](repeating: 0x80, count: 1000)
        #expect(throws: CBORError.tooManyItems(limit: 256)) { try Self.read(wide) }
    }

    @Test func readsEightLevelsButNotNine() throws {
        #expect(try Self.read([UInt8](repeating: 0x81, count: 7) + [0x80]).array != nil)
        #expect(throws: CBORError.tooDeep(limit: 3)) {
            try Self.read([0x81, 0x81, 0x81, 0x00], limits: CBORReader.Limits(maximumDepth: 3))
        }
    }

    @Test(arguments: RecordedSample.names)
    func refusesEveryProperPrefixOfASampleAsTruncated(_ name: String) throws {
        let sample = try RecordedSample(named: name)
        for input in [sample.attestation, sample.assertion] {
            for length in 0..<input.count {
                #expect(throws: CBORError.truncated) { try Self.read(Array(input[..<length])) }
            }
        }
    }
}
