import AmodbCompression
import Testing

struct ContentVariantsTests {
    @Test
    func makesBothVariantsOfTheTrendingPageAndCountsEveryByte() async throws {
        let body = await StandInBodies.body(StandInBodies.trendingTarget)
        let variants = try ContentVariants(compressing: body)
        let gzip = try #require(variants.gzip)
        let br = try #require(variants.br)
        #expect(variants.available == .all)
        #expect(variants.byteCount == body.count + gzip.count + br.count)
        let decoder = ContentDecoder(maximumOutputSize: body.count)
        #expect(try decoder.decode(gzip, from: .gzip) == body)
        #expect(try decoder.decode(br, from: .br) == body)
    }

    /// A stored answer holds its bytes, not the room they were made in: the compressors
    /// write into their worst-case bound and a body read in chunks grows by doubling.
    @Test
    func keepsEachVariantInABufferOfItsOwnSize() async throws {
        let body = await StandInBodies.body(StandInBodies.trendingTarget)
        var roomy: [UInt8] = []
        roomy.reserveCapacity(body.count * 4)
        roomy.append(contentsOf: body)
        let variants = try ContentVariants(compressing: roomy)
        let gzip = try #require(variants.gzip)
        let br = try #require(variants.br)
        #expect(variants.identity == body)
        for bytes in [variants.identity, gzip, br] {
            #expect(bytes.capacity - bytes.count <= 64, "\(bytes.capacity) bytes of room for \(bytes.count)")
        }
    }

    @Test(arguments: [(255, false), (256, true)])
    func leavesAnswersBelowTheMinimumSizeAsIdentity(size: Int, compressed: Bool) throws {
        let body = Array(String(repeating: "{\"status_message\":\"x\"}", count: 20).utf8.prefix(size))
        let variants = try ContentVariants(compressing: body)
        #expect(variants.available == (compressed ? .all : .identity))
        #expect(variants.byteCount == size + (variants.gzip?.count ?? 0) + (variants.br?.count ?? 0))
    }

    /// Already-compressed bytes do not shrink again: gzip adds its header and trailer,
    /// brotli stores them with a few bytes of framing.
    @Test
    func dropsAVariantThatIsNotSmallerThanTheIdentityBytes() async throws {
        let body = await StandInBodies.body(StandInBodies.trendingTarget)
        let incompressible = try ContentEncoder().encode(body, as: .br)
        let variants = try ContentVariants(compressing: incompressible)
        #expect(variants.available == .identity)
        #expect(variants.bytes(for: .gzip) == nil)
        #expect(variants.byteCount == incompressible.count)
    }

    @Test
    func servesTheNegotiatedVariant() async throws {
        let body = await StandInBodies.body(StandInBodies.movieTarget)
        let variants = try ContentVariants(compressing: body)
        let cases: [(String?, ContentCoding)] = [
            ("gzip, deflate, br", .br), ("gzip", .gzip), (nil, .identity), ("identity", .identity),
        ]
        for (header, expected) in cases {
            let acceptEncoding = header.map { AcceptEncoding(fieldValues: [$0]) } ?? AcceptEncoding()
            #expect(acceptEncoding.negotiate(available: variants.available) == .send(expected))
            let bytes = try #require(variants.bytes(for: expected))
            #expect(try ContentDecoder(maximumOutputSize: body.count).decode(bytes, from: expected) == body)
        }
    }

    @Test
    func restoresVariantsMadeEarlierAsTheyAre() async throws {
        let made = try ContentVariants(compressing: await StandInBodies.body(StandInBodies.movieTarget))
        #expect(ContentVariants(identity: made.identity, gzip: made.gzip, br: made.br) == made)
        #expect(ContentVariants(identity: made.identity, gzip: nil, br: made.br).available == [.identity, .br])
    }

    /// A fill makes gzip for its waiters, and the queue br after: the variants are those
    /// made in one step, and the gzip bytes made first are the ones kept.
    @Test
    func variantsMadeInTwoStepsAreThoseMadeInOne() async throws {
        let body = await StandInBodies.body(StandInBodies.trendingTarget)
        let gzipOnly = try ContentVariants(compressing: body, codings: .gzip)
        #expect(gzipOnly.available == [.identity, .gzip])
        #expect(gzipOnly.pending == .br)
        let completed = try gzipOnly.completed()
        #expect(completed.pending.isEmpty)
        #expect(completed.gzip == gzipOnly.gzip)
        #expect(completed == (try ContentVariants(compressing: body)))
        #expect(try completed.completed() == completed, "nothing left to make")
    }

    @Test(arguments: [(255, ContentCodingSet()), (256, ContentCodingSet.br)])
    func nothingIsPendingBelowTheMinimumSize(size: Int, pending: ContentCodingSet) throws {
        let body = Array(String(repeating: "{\"status_message\":\"x\"}", count: 20).utf8.prefix(size))
        #expect(try ContentVariants(compressing: body, codings: .gzip).pending == pending)
        #expect(ContentVariants(identity: body, gzip: nil, br: nil).pending.isEmpty, "restored variants are complete")
    }
}
