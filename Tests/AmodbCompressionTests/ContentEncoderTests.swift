import Testing

@testable import AmodbCompression

/// Decodes with a cap far above any answer here.
private let decoder = ContentDecoder(maximumOutputSize: 1 << 20)

struct ContentEncoderTests {
    static let targets = [StandInBodies.trendingTarget, StandInBodies.movieTarget]

    @Test(arguments: targets, [ContentCoding.gzip, .br])
    func roundTripsTheStandInsBodies(target: String, coding: ContentCoding) async throws {
        let body = await StandInBodies.body(target)
        let encoded = try ContentEncoder().encode(body, as: coding)
        #expect(encoded.count < body.count)
        #expect(try decoder.decode(encoded, from: coding) == body)
    }

    @Test(arguments: ContentCoding.allCases)
    func roundTripsAnEmptyBody(coding: ContentCoding) throws {
        let encoded = try ContentEncoder().encode([], as: coding)
        #expect(try decoder.decode(encoded, from: coding) == [])
    }

    @Test
    func leavesIdentityBytesAsTheyAre() async throws {
        let body = await StandInBodies.body(StandInBodies.movieTarget)
        #expect(try ContentEncoder().encode(body, as: .identity) == body)
    }

    /// RFC 1952 §2.3: magic 1f 8b, method 8 (deflate), XFL 2 ("maximum compression",
    /// which zlib writes for level 9 only), and an ISIZE trailer equal to the length.
    @Test(arguments: targets)
    func makesAGzipMemberAtLevelNineThatGzipReads(target: String) async throws {
        let body = await StandInBodies.body(target)
        let encoded = try ContentEncoder().encode(body, as: .gzip)
        #expect(Array(encoded.prefix(3)) == [0x1F, 0x8B, 0x08])
        #expect(encoded[8] == 2, "XFL says the member was not made at level 9")
        let isize = encoded.suffix(4).reversed().reduce(0) { $0 << 8 | Int($1) }
        #expect(isize == body.count)
        #expect(try ExternalDecoders.gunzip(encoded) == body)
    }

    @Test(
        .enabled(if: ExternalDecoders.pythonBrotliIsAvailable, "python3's brotli module is not installed"),
        arguments: targets)
    func makesBrotliThatPythonsBrotliModuleReads(target: String) async throws {
        let body = await StandInBodies.body(target)
        let encoded = try ContentEncoder().encode(body, as: .br)
        #expect(try ExternalDecoders.pythonBrotliDecompress(encoded) == body)
    }

    /// The issue measured the trending page at 10,499 bytes and gzip -9 at 3,284;
    /// level 9 through zlib must do at least as well as gzip(1) -9, and brotli at
    /// quality 11 better still (measured: 3,276 and 2,667 bytes; the movie with
    /// credits and ratings 1,937 → 1,067 and 936).
    @Test(arguments: targets)
    func compressesAtLeastAsWellAsGzipNineAndBrotliBetter(target: String) async throws {
        let body = await StandInBodies.body(target)
        let gzip = try ContentEncoder().encode(body, as: .gzip)
        let br = try ContentEncoder().encode(body, as: .br)
        let gzipNine = try ExternalDecoders.gzipBest(body)
        #expect(gzip.count <= gzipNine.count)
        #expect(br.count < gzip.count * 9 / 10)
    }

    @Test
    func bringsTheTrendingPageToAThirdWithGzipAndAQuarterWithBrotli() async throws {
        let body = await StandInBodies.body(StandInBodies.trendingTarget)
        #expect((10_000...11_000).contains(body.count), "the issue's trending page is ~10.5 KB")
        #expect(try ContentEncoder().encode(body, as: .gzip).count <= 3_300)
        #expect(try ContentEncoder().encode(body, as: .br).count <= 2_700)
    }

    /// A JSON body of exactly `size` bytes, varied enough that each setting gives its own bytes.
    static func jsonBody(_ size: Int) -> [UInt8] {
        var text = "{\"id\":550,\"cast\":["
        var member = 0
        while text.utf8.count < size {
            text += "{\"id\":\(member * 7919 % 100_003),\"name\":\"Person \(member * 31 % 977)\",\"order\":\(member)},"
            member += 1
        }
        return Array(text.utf8.prefix(size))
    }

    /// Level 9 up to the limit, level 6 above it: zlib writes XFL 2 for level 9 and 0 for
    /// the levels between 2 and 8 (RFC 1952 §2.3.1).
    @Test(arguments: [(ContentEncoder.bestGzipLimit, UInt8(2)), (ContentEncoder.bestGzipLimit + 1, UInt8(0))])
    func gzipsAtLevelNineUpToItsLimitAndLevelSixAbove(size: Int, xfl: UInt8) throws {
        let body = Self.jsonBody(size)
        let encoded = try ContentEncoder().encode(body, as: .gzip)
        #expect(encoded[8] == xfl)
        #expect(try decoder.decode(encoded, from: .gzip) == body)
    }

    @Test(arguments: [(ContentEncoder.bestBrotliLimit, Int32(11)), (ContentEncoder.bestBrotliLimit + 1, Int32(5))])
    func compressesBrotliAtQualityElevenUpToItsLimitAndFiveAbove(size: Int, quality: Int32) throws {
        let body = Self.jsonBody(size)
        let encoded = try ContentEncoder().encode(body, as: .br)
        let brotli = try #require(Brotli.system)
        #expect(
            encoded
                == (try brotli.encode(
                    body, quality: quality, windowBits: ContentEncoder.brotliWindowBits, mode: LibBrotli.modeText)))
        let other: Int32 = quality == 11 ? 5 : 11
        #expect(
            encoded
                != (try brotli.encode(
                    body, quality: other, windowBits: ContentEncoder.brotliWindowBits, mode: LibBrotli.modeText)))
        #expect(try decoder.decode(encoded, from: .br) == body)
    }
}
