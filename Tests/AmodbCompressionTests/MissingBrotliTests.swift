import Testing

@testable import AmodbCompression

/// A machine without libbrotli1: the encoder and decoder are given no brotli, as the
/// process's own are when loading it fails. br is then neither made nor offered, and a
/// client that accepts br gets gzip.
struct MissingBrotliTests {
    static let encoder = ContentEncoder(brotli: nil)

    @Test
    func anEncoderWithoutBrotliMakesGzipAndIdentityOnly() throws {
        #expect(Self.encoder.codings == [.identity, .gzip])
        #expect(throws: CompressionError.unavailable(.br)) { try Self.encoder.encode(Array("{}".utf8), as: .br) }
    }

    @Test
    func theProcessMakesBrWhenItsBrotliLoaded() {
        #expect(ContentEncoder().codings == (Brotli.system == nil ? [.identity, .gzip] : .all))
        #expect((ContentEncoder.brotliUnavailability == nil) == (Brotli.system != nil))
    }

    @Test
    func variantsWithoutBrotliHaveGzipAndNothingPending() async throws {
        let body = await StandInBodies.body(StandInBodies.trendingTarget)
        let variants = try ContentVariants(compressing: body, encoder: Self.encoder)
        #expect(variants.br == nil)
        #expect(variants.pending.isEmpty, "br is not left to be made later")
        #expect(variants.available == [.identity, .gzip])
        let gzipFirst = try ContentVariants(compressing: body, codings: .gzip, encoder: Self.encoder)
        #expect(gzipFirst.pending.isEmpty, "after a fill's gzip, no job waits to make br")
        #expect(try gzipFirst.completed(encoder: Self.encoder) == variants)
    }

    @Test(arguments: [
        ("gzip, deflate, br" as String?, EncodingChoice.send(.gzip)), ("br;q=1, gzip;q=0.5", .send(.gzip)),
        ("br", .send(.identity)), (nil, .send(.identity)), ("br, identity;q=0", .notAcceptable),
    ])
    func aClientAcceptingBrIsNotSentBr(acceptEncoding: String?, choice: EncodingChoice) async throws {
        let body = await StandInBodies.body(StandInBodies.movieTarget)
        let variants = try ContentVariants(compressing: body, encoder: Self.encoder)
        let accept = acceptEncoding.map { AcceptEncoding(fieldValues: [$0]) } ?? AcceptEncoding()
        #expect(accept.negotiate(available: variants.available) == choice)
        if case .send(let coding) = choice {
            let bytes = try #require(variants.bytes(for: coding))
            #expect(try ContentDecoder(maximumOutputSize: body.count).decode(bytes, from: coding) == body)
        }
    }

    @Test
    func aDecoderWithoutBrotliRefusesBrAndReadsGzip() async throws {
        let body = await StandInBodies.body(StandInBodies.movieTarget)
        let decoder = ContentDecoder(maximumOutputSize: body.count, brotli: nil)
        let gzip = try Self.encoder.encode(body, as: .gzip)
        #expect(try decoder.decode(gzip, from: .gzip) == body)
        let br = try #require(Brotli.system, "this machine has libbrotli1").encode(
            body, quality: 5, windowBits: ContentEncoder.brotliWindowBits, mode: LibBrotli.modeText)
        #expect(throws: CompressionError.unavailable(.br)) { try decoder.decode(br, from: .br) }
    }

    @Test
    func aMissingLibraryNamesThePackageToInstall() throws {
        do {
            _ = try LibBrotli(
                encoderFileNames: ["libbrotlienc.so.0-missing"], decoderFileNames: LibBrotli.decoderFileNames)
            Issue.record("a library that does not exist loaded")
        } catch {
            let message = String(describing: error)
            #expect(message.contains("needs libbrotli1 (libbrotlienc.so.0-missing): apt-get install libbrotli1"))
            #expect(message.contains("libbrotlienc.so.0-missing: cannot open shared object file"), "dlopen's words")
        }
    }
}
