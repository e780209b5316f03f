import AmodbCompression
import AmodbTestSupport
import Dispatch
import Synchronization
import Testing

@testable import AmodbProxy

/// A fill makes its answer's gzip variant itself (`gzipped`), within bounds; the queue then
/// makes what is pending and keeps the gzip bytes the fill made, so an answer has one gzip
/// variant and one gzip tag. The queue is bounded (a job that does not fit is dropped and
/// counted), and compresses nothing for an entry no longer stored or too large to keep.
@Suite(.timeLimit(.minutes(1)))
struct VariantMakerTests {
    static let body = Array(String(repeating: ScriptedUpstream.moviePage, count: 30).utf8)
    static let entry = CachedResponse(body: body, storedAt: 0, lifetime: 1800)

    @Test func aFillGzipsItsAnswerAndLeavesBrPending() throws {
        let maker = VariantMaker()
        let gzipped = maker.gzipped(Self.entry) { _ in true }
        let variants = try #require(gzipped.variants)
        #expect(variants.available == [.identity, .gzip])
        #expect(variants.pending == .br)
        #expect(
            try ContentDecoder(maximumOutputSize: Self.body.count).decode(try #require(variants.gzip), from: .gzip)
                == Self.body)
        #expect(gzipped.etag == Self.entry.etag)
        #expect(gzipped.withForm(.gzip) { $0.tag } == Self.entry.etag.dropLast() + "-gzip\"")
        #expect(maker.compressedBytes == Self.body.count)
    }

    @Test(
        "Too short to compress, or too long to compress inline: left to the queue",
        arguments: [
            ContentVariants.defaultMinimumSize - 1, VariantMaker.inlineGzipLimit + 1,
        ])
    func outOfBoundsBodiesAreNotGzippedInline(size: Int) {
        let entry = CachedResponse(body: Array(Self.body.cycled(to: size)), storedAt: 0, lifetime: 1800)
        #expect(VariantMaker().gzipped(entry) { _ in true }.variants == nil)
    }

    @Test func aFillDoesNotGzipAnAnswerTheCacheCouldNotKeepWithItsVariants() {
        let maker = VariantMaker()
        let least = VariantMaker.leastByteCount(of: Self.entry)
        #expect(least == Self.body.count + 2 * (Self.body.count / VariantMaker.smallestShare))
        #expect(maker.gzipped(Self.entry) { $0 < least }.variants == nil)
        #expect(maker.compressedBytes == 0, "asked before compressing, not after")
    }

    @Test func theQueueMakesBrAndKeepsTheFillsGzipBytes() async throws {
        let maker = VariantMaker()
        let gzipped = maker.gzipped(Self.entry) { _ in true }
        let slot = SlotStandIn(gzipped)
        maker.make(gzipped, in: slot.slot)
        #expect(await eventually { maker.compressions == 1 })
        let made = slot.current
        let complete = try #require(made.variants)
        #expect(complete.pending.isEmpty)
        #expect(complete.available == .all)
        #expect(complete.gzip == gzipped.variants?.gzip, "the one gzip variant, byte for byte")
        #expect(
            try ContentDecoder(maximumOutputSize: Self.body.count).decode(try #require(complete.br), from: .br)
                == Self.body)
        // The same bytes the queue alone makes for an answer no fill gzipped.
        #expect(complete == (try ContentVariants(compressing: Self.body)))
        #expect(maker.compressedBytes == 2 * Self.body.count)
        // Whether to queue is decided in `make` itself: a job would be in the backlog now.
        maker.make(made, in: slot.slot)
        #expect(maker.queued.jobs == 0, "nothing is pending: no job")
        #expect(maker.compressions == 1)
        #expect(maker.count(.dropped) + maker.count(.stale) == 0)
    }

    @Test(
        "A full queue drops the job and counts it",
        arguments: [
            VariantMaker.Limits(jobs: 1, bytes: 1 << 30), VariantMaker.Limits(jobs: 100, bytes: body.count + 1),
        ])
    func aFullQueueDropsTheJob(limits: VariantMaker.Limits) async throws {
        let maker = VariantMaker(limits: limits)
        let first = SlotStandIn(Self.entry, blocked: true)
        maker.make(Self.entry, in: first.slot)
        #expect(await eventually { first.asked })
        #expect(maker.queued.jobs == 1)
        #expect(maker.queued.bytes == Self.body.count)
        let other = CachedResponse(body: Self.body, storedAt: 1, lifetime: 1800)
        let second = SlotStandIn(other)
        maker.make(other, in: second.slot)
        #expect(maker.count(.dropped) == 1)
        first.release()
        #expect(await eventually { maker.compressions == 1 })
        #expect(maker.queued.jobs == 0 && maker.queued.bytes == 0)
        #expect(first.current.variants?.available == .all)
        #expect(second.current.variants == nil, "dropped: answered identity until its next fill")
        #expect(maker.compressedBytes == 2 * Self.body.count, "the dropped job compressed nothing")
        // Room again: the next job runs.
        maker.make(other, in: second.slot)
        #expect(await eventually { maker.compressions == 2 })
    }

    @Test func aJobWhoseEntryWasReplacedBeforeItsTurnCompressesNothing() async throws {
        let maker = VariantMaker()
        let slot = SlotStandIn(Self.entry, blocked: true)
        maker.make(Self.entry, in: slot.slot)
        #expect(await eventually { slot.asked })
        // A refresh stores a new answer while the job waits for its turn.
        slot.replace(with: CachedResponse(body: Self.body, storedAt: 60, lifetime: 1800))
        slot.release()
        #expect(await eventually { maker.count(.stale) == 1 })
        #expect(maker.compressedBytes == 0)
        #expect(maker.compressions == 0)
        #expect(slot.current.storedAt == 60 && slot.current.variants == nil)
    }

    @Test func anEntryTheCacheCouldNotKeepWithItsVariantsIsNotQueued() async throws {
        let maker = VariantMaker()
        let least = VariantMaker.leastByteCount(of: Self.entry)
        let slot = SlotStandIn(Self.entry, admits: { $0 < least })
        maker.make(Self.entry, in: slot.slot)
        #expect(maker.queued.jobs == 0, "decided in `make`: a job would be in the backlog now")
        #expect(VariantMaker.JobResult.allCases.allSatisfy { maker.count($0) == 0 })
        #expect(maker.compressedBytes == 0)
    }

    @Test func variantsThatDoNotFitAreDroppedLargestCodingLast() throws {
        let variants = try ContentVariants(compressing: Self.body)
        let all = variants.byteCount
        let withoutBr = all - (variants.br?.count ?? 0)
        #expect(VariantMaker.fitting(variants) { _ in true } == variants)
        #expect(VariantMaker.fitting(variants) { $0 < all }.available == [.identity, .gzip])
        #expect(VariantMaker.fitting(variants) { $0 < withoutBr }.available == .identity)
        #expect(VariantMaker.fitting(variants) { $0 < withoutBr }.pending.isEmpty)
    }

    @Test func theQueueIsCountedInTheMetrics() async throws {
        let maker = VariantMaker(limits: .init(jobs: 1, bytes: 1 << 30))
        let first = SlotStandIn(Self.entry, blocked: true)
        maker.make(Self.entry, in: first.slot)
        #expect(await eventually { first.asked })
        maker.make(Self.entry, in: SlotStandIn(Self.entry).slot)
        var out = PrometheusText()
        maker.render(into: &out)
        let samples = try PrometheusSamples(out.text)
        #expect(try samples.value("amodb_proxy_variant_jobs_total", ["result": "dropped"]) == 1)
        #expect(try samples.value("amodb_proxy_variant_queue_jobs") == 1)
        #expect(try samples.value("amodb_proxy_variant_queue_bytes") == Double(Self.body.count))
        first.release()
        #expect(await eventually { maker.compressions == 1 })
    }
}

/// One cache slot for a job: holds an entry (replaceable, as a refresh would), stores what
/// the job hands back while it holds the same one, and can hold the job at its first question.
private final class SlotStandIn: Sendable {
    private let stored: Mutex<CachedResponse>
    private let gate = DispatchSemaphore(value: 0)
    private let blocked: Mutex<Bool>
    private let askedFlag = Mutex(false)
    private let admits: @Sendable (Int) -> Bool

    init(_ entry: CachedResponse, blocked: Bool = false, admits: @escaping @Sendable (Int) -> Bool = { _ in true }) {
        stored = Mutex(entry)
        self.blocked = Mutex(blocked)
        self.admits = admits
    }

    var current: CachedResponse { stored.withLock { $0 } }
    /// Whether the job has asked its first question (and, if blocked, waits there).
    var asked: Bool { askedFlag.withLock { $0 } }

    func replace(with entry: CachedResponse) { stored.withLock { $0 = entry } }

    func release() {
        blocked.withLock { $0 = false }
        gate.signal()
    }

    var slot: VariantMaker.Slot {
        VariantMaker.Slot(
            holds: { [self] entry in
                askedFlag.withLock { $0 = true }
                if blocked.withLock({ $0 }) { gate.wait() }
                return holds(entry)
            },
            admits: admits,
            store: { [self] entry in
                stored.withLock { current in
                    guard current.isSameAnswer(as: entry) else { return false }
                    current = entry
                    return true
                }
            })
    }

    private func holds(_ entry: CachedResponse) -> Bool {
        let current = current
        return current.isSameAnswer(as: entry) && current.variants == entry.variants
    }
}

extension Array {
    /// The elements repeated until there are `count` of them.
    fileprivate func cycled(to count: Int) -> [Element] {
        (0..<count).map { self[$0 % self.count] }
    }
}
