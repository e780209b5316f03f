import AmodbCompression
import CZlib
import Testing

/// The strict gzip reading (`GzipFraming.plainSingleMember`): exactly one member, a header
/// with no optional field, nothing after the trailer. Every gzip reader reads such a body
/// whole; a reader that stops after the first member (libcurl, a single-member zlib loop)
/// reads something else of the forgeries below, which gzip(1) and the lenient decoder
/// read as the body.
struct PlainGzipMemberTests {
    /// Ways to frame a body's gzip that are valid RFC 1952 (but for the last two) and not plain.
    enum Forgery: String, CaseIterable, CustomTestStringConvertible {
        case twoMembersTheFirstEmpty, commentOf8KB, name, extraField, headerCRC, bytesAfterTheTrailer, reservedFlag

        var testDescription: String { rawValue }

        /// Whether zlib reads it, member after member, as the body (the lenient decoder does).
        var isValidGzip: Bool { self != .bytesAfterTheTrailer && self != .reservedFlag }

        /// `body`'s gzip, made by the proxy's encoder, then framed this way.
        func frame(_ body: [UInt8]) throws -> [UInt8] {
            let member = try ContentEncoder().encode(body, as: .gzip)
            switch self {
            case .twoMembersTheFirstEmpty:
                return try ContentEncoder().encode([], as: .gzip) + member
            case .commentOf8KB:
                return Self.header(of: member, flags: 0x10, fields: [UInt8](repeating: 0x61, count: 8 * 1024) + [0])
            case .name:
                return Self.header(of: member, flags: 0x08, fields: Array("answer.json".utf8) + [0])
            case .extraField:
                // XLEN 4: one subfield, SI1 SI2 "AP", LEN 0 (RFC 1952 §2.3.1.1).
                return Self.header(of: member, flags: 0x04, fields: [4, 0, 0x41, 0x50, 0, 0])
            case .headerCRC:
                // CRC16: the two low bytes of the CRC32 of the header before it (RFC 1952 §2.3.1).
                var fixed = Array(member[..<10])
                fixed[3] = 0x02
                let crc = fixed.withUnsafeBufferPointer { crc32(0, $0.baseAddress, uInt($0.count)) }
                return fixed + [UInt8(truncatingIfNeeded: crc), UInt8(truncatingIfNeeded: crc >> 8)] + member[10...]
            case .bytesAfterTheTrailer:
                return member + Array("{\"junk\":1}".utf8)
            case .reservedFlag:
                return Self.header(of: member, flags: 0x20, fields: [])
            }
        }

        /// `member` with FLG set to `flags` and `fields` after its fixed 10-byte header.
        static func header(of member: [UInt8], flags: UInt8, fields: [UInt8]) -> [UInt8] {
            var fixed = Array(member[..<10])
            fixed[3] = flags
            return fixed + fields + member[10...]
        }
    }

    static let strict = ContentDecoder(maximumOutputSize: 1 << 20, gzipFraming: .plainSingleMember)
    static let lenient = ContentDecoder(maximumOutputSize: 1 << 20)

    @Test(arguments: Forgery.allCases)
    func theStrictDecoderRefusesEachForgeryAsNotPlain(forgery: Forgery) async throws {
        let body = await StandInBodies.body(StandInBodies.movieTarget)
        let framed = try forgery.frame(body)
        #expect(throws: CompressionError.notPlainSingleMember(.gzip)) { try Self.strict.decode(framed, from: .gzip) }
    }

    /// What made them dangerous: read as gzip(1) reads them, they are the body.
    @Test(arguments: Forgery.allCases.filter(\.isValidGzip))
    func theLenientDecoderReadsTheValidOnesAsTheBody(forgery: Forgery) async throws {
        let body = await StandInBodies.body(StandInBodies.movieTarget)
        #expect(try Self.lenient.decode(try forgery.frame(body), from: .gzip) == body)
    }

    /// Replicas write the encoder's gzip into Redis: every size, each level, must pass.
    @Test(arguments: [0, 1, 255, 256, 10_000, ContentEncoder.bestGzipLimit, ContentEncoder.bestGzipLimit + 1, 600_000])
    func theEncodersGzipIsOnePlainMember(size: Int) throws {
        let body = (0..<size).map { UInt8(truncatingIfNeeded: $0 % 251 ^ $0 / 7) }
        let gzip = try ContentEncoder().encode(body, as: .gzip)
        #expect(gzip[3] == 0, "FLG")
        let strict = ContentDecoder(maximumOutputSize: size, gzipFraming: .plainSingleMember)
        #expect(try strict.decode(gzip, from: .gzip) == body)
    }

    @Test(arguments: [StandInBodies.trendingTarget, StandInBodies.movieTarget])
    func theVariantsOfAStoredAnswerPassTheStrictDecoder(target: String) async throws {
        let body = await StandInBodies.body(target)
        let variants = try ContentVariants(compressing: body)
        let gzip = try #require(variants.gzip)
        #expect(try Self.strict.decode(gzip, from: .gzip) == body)
        #expect(try Self.strict.decode(try #require(variants.br), from: .br) == body)
    }

    /// FTEXT is a hint about the content, not a field: a member carrying it is read alike by all.
    @Test
    func aMemberMarkedAsTextIsPlain() async throws {
        let body = await StandInBodies.body(StandInBodies.movieTarget)
        let marked = Forgery.header(of: try ContentEncoder().encode(body, as: .gzip), flags: 0x01, fields: [])
        #expect(try Self.strict.decode(marked, from: .gzip) == body)
    }

    /// A plain member whose content is wrong is refused for that, as by the lenient decoder:
    /// only framing is reported as framing.
    @Test
    func faultsOfThePlainMembersContentAreReportedAsTheyAreByTheLenientDecoder() async throws {
        let body = await StandInBodies.body(StandInBodies.movieTarget)
        let member = try ContentEncoder().encode(body, as: .gzip)
        var wrongCRC = member
        wrongCRC[wrongCRC.count - 8] ^= 0x01
        #expect(throws: CompressionError.malformed(.gzip)) { try Self.strict.decode(wrongCRC, from: .gzip) }
        #expect(throws: CompressionError.truncated(.gzip)) {
            try Self.strict.decode(Array(member.dropLast(3)), from: .gzip)
        }
        #expect(throws: CompressionError.outputTooLarge(.gzip, limit: body.count - 1)) {
            try ContentDecoder(maximumOutputSize: body.count - 1, gzipFraming: .plainSingleMember)
                .decode(member, from: .gzip)
        }
    }

    @Test
    func theErrorSaysWhatIsNotPlain() {
        #expect(
            CompressionError.notPlainSingleMember(.gzip).description
                == "gzip body is not one member without optional header fields")
        #expect(CompressionError.notPlainSingleMember(.gzip) != CompressionError.malformed(.gzip))
    }
}
