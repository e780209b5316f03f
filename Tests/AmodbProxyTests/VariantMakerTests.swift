import AmodbCompression
@testable import AmodbProxy
import AmodbTestSupport
import Synchronization
import Testing

/// A fill makes its answer's gzip variant itself (`gzipped`), within bounds; the queue then
/// makes what is pending and keeps the gzip bytes the fill made, so an answer has one gzip
/// variant and one gzip tag.
@Suite(.timeLimit(.minutes(1)))
struct VariantMakerTests {
    static let body = Array(String(repeating: ScriptedUpstream.moviePage, count: 30).utf8)

    @Test func aFillGzipsItsAnswerAndLeavesBrPending() throws {
        let entry = CachedResponse(body: Self.body, storedAt: 0, lifetime: 1800)
        let gzipped = VariantMaker().gzipped(entry)
        let variants = try #require(gzipped.variants)
        #expect(variants.available == [.identity, .gzip])
        #expect(variants.pending == .br)
        #expect(try ContentDecoder(maximumOutputSize: Self.body.count).decode(try #require(variants.gzip), from: .gzip) == Self.body)
        #expect(gzipped.etag == entry.etag)
        #expect(gzipped.form(.gzip).tag == entry.etag.dropLast() + "-gzip\"")
    }

    @Test("Too short to compress, or too long to compress inline: left to the queue", arguments: [
        ContentVariants.defaultMinimumSize - 1, VariantMaker.inlineGzipLimit + 1,
    ])
    func outOfBoundsBodiesAreNotGzippedInline(size: Int) {
        let entry = CachedResponse(body: Array(Self.body.cycled(to: size)), storedAt: 0, lifetime: 1800)
        #expect(VariantMaker().gzipped(entry).variants == nil)
    }

    @Test func theQueueMakesBrAndKeepsTheFillsGzipBytes() async throws {
        let maker = VariantMaker()
        let gzipped = maker.gzipped(CachedResponse(body: Self.body, storedAt: 0, lifetime: 1800))
        let stored = Mutex<CachedResponse?>(nil)
        maker.make(gzipped) { entry in stored.withLock { $0 = entry } }
        #expect(await eventually { maker.compressions == 1 })
        let made = try #require(stored.withLock { $0 })
        let complete = try #require(made.variants)
        #expect(complete.pending.isEmpty)
        #expect(complete.available == .all)
        #expect(complete.gzip == gzipped.variants?.gzip, "the one gzip variant, byte for byte")
        #expect(try ContentDecoder(maximumOutputSize: Self.body.count).decode(try #require(complete.br), from: .br) == Self.body)
        // The same bytes the queue alone makes for an answer no fill gzipped.
        #expect(complete == (try ContentVariants(compressing: Self.body)))
        maker.make(made) { _ in Issue.record("nothing is pending") }
        try await Task.sleep(for: .milliseconds(50))
        #expect(maker.compressions == 1)
    }
}

extension Array {
    /// The elements repeated until there are `count` of them.
    fileprivate func cycled(to count: Int) -> [Element] {
        (0..<count).map { self[$0 % self.count] }
    }
}
