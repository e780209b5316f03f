import AmodbCompression
import Testing

struct ContentDecoderTests {
    static let compressed: [ContentCoding] = [.gzip, .br]

    /// 8 MiB of zeros compress to a few KB (gzip) or a few bytes (br): a bomb for a
    /// decoder that trusts its input.
    @Test(arguments: compressed)
    func refusesABombBeyondTheCap(coding: ContentCoding) throws {
        let bomb = try ContentEncoder().encode([UInt8](repeating: 0, count: 8 << 20), as: coding)
        #expect(bomb.count < 16 * 1024)
        let decoder = ContentDecoder(maximumOutputSize: 1 << 20)
        #expect(throws: CompressionError.outputTooLarge(coding, limit: 1 << 20)) {
            try decoder.decode(bomb, from: coding)
        }
    }

    @Test(arguments: ContentCoding.allCases)
    func decodesABodyOfExactlyTheCapAndRefusesOneByteLess(coding: ContentCoding) async throws {
        let body = await StandInBodies.body(StandInBodies.movieTarget)
        let encoded = try ContentEncoder().encode(body, as: coding)
        #expect(try ContentDecoder(maximumOutputSize: body.count).decode(encoded, from: coding) == body)
        #expect(throws: CompressionError.outputTooLarge(coding, limit: body.count - 1)) {
            try ContentDecoder(maximumOutputSize: body.count - 1).decode(encoded, from: coding)
        }
    }

    /// A transfer cut anywhere, even inside the trailer, is truncated, not a shorter body.
    @Test(arguments: compressed, [0, 1, 9, 100, 500, -1])
    func refusesABodyCutShort(coding: ContentCoding, cut: Int) async throws {
        let body = await StandInBodies.body(StandInBodies.trendingTarget)
        let encoded = try ContentEncoder().encode(body, as: coding)
        let kept = cut >= 0 ? cut : encoded.count + cut
        #expect(throws: CompressionError.truncated(coding)) {
            try ContentDecoder(maximumOutputSize: 1 << 20).decode(Array(encoded.prefix(kept)), from: coding)
        }
    }

    @Test(arguments: compressed)
    func refusesBytesAfterTheEndOfTheStream(coding: ContentCoding) async throws {
        let body = await StandInBodies.body(StandInBodies.movieTarget)
        let encoded = try ContentEncoder().encode(body, as: coding) + Array("{\"junk\":1}".utf8)
        #expect(throws: CompressionError.malformed(coding)) {
            try ContentDecoder(maximumOutputSize: 1 << 20).decode(encoded, from: coding)
        }
    }

    @Test(arguments: compressed)
    func refusesPlainJSONLabelledCompressed(coding: ContentCoding) async throws {
        let body = await StandInBodies.body(StandInBodies.movieTarget)
        #expect(throws: CompressionError.malformed(coding)) {
            try ContentDecoder(maximumOutputSize: 1 << 20).decode(body, from: coding)
        }
    }

    /// The trailer guards the data (RFC 1952 §2.3.1): a wrong CRC32 or ISIZE is corruption.
    @Test(arguments: [("CRC32", 8), ("ISIZE", 4)])
    func refusesGzipWhoseTrailerDoesNotMatch(field: String, offsetFromEnd: Int) async throws {
        let body = await StandInBodies.body(StandInBodies.movieTarget)
        var encoded = try ContentEncoder().encode(body, as: .gzip)
        encoded[encoded.count - offsetFromEnd] ^= 0x01
        #expect(throws: CompressionError.malformed(.gzip), "\(field)") {
            try ContentDecoder(maximumOutputSize: 1 << 20).decode(encoded, from: .gzip)
        }
    }

    /// A zlib stream (RFC 1950) is what servers send for `deflate`, not `gzip`.
    @Test
    func refusesAZlibStreamLabelledGzip() throws {
        let emptyZlibStream: [UInt8] = [0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]
        #expect(throws: CompressionError.malformed(.gzip)) {
            try ContentDecoder(maximumOutputSize: 1 << 20).decode(emptyZlibStream, from: .gzip)
        }
    }

    /// RFC 1952 §2.2: a gzip file may hold several members, read as one body, as
    /// gzip(1) does.
    @Test
    func readsConcatenatedGzipMembersAsOneBodyAsGzipDoes() async throws {
        let first = await StandInBodies.body(StandInBodies.movieTarget)
        let second = await StandInBodies.body(StandInBodies.trendingTarget)
        let encoder = ContentEncoder()
        let members = try encoder.encode(first, as: .gzip) + encoder.encode(second, as: .gzip)
        #expect(try ContentDecoder(maximumOutputSize: 1 << 20).decode(members, from: .gzip) == first + second)
        #expect(try ExternalDecoders.gunzip(members) == first + second)
    }

    @Test
    func errorsSayWhatHappenedAndToWhichCoding() {
        #expect(CompressionError.truncated(.gzip).description == "gzip body ends before its stream does")
        #expect(CompressionError.malformed(.br).description == "br body is not a valid br stream")
        #expect(CompressionError.outputTooLarge(.br, limit: 10).description == "br body decodes to more than 10 bytes")
        #expect(CompressionError.truncated(.gzip) != CompressionError.truncated(.br))
    }
}
