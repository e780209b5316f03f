import AmodbCompression
import Dispatch
import Synchronization

/// Makes each stored answer's gzip and br variants once, off the event loops: compressing
/// costs milliseconds to tens of milliseconds per answer, so it runs one job at a time on
/// a serial queue of its own.
///
/// The queue is bounded, in jobs and in the bytes its jobs hold: a job that does not fit
/// is dropped, and the entry is answered in the codings it has (identity at least) until
/// its next fill. A job compresses nothing for an entry that is no longer the one stored
/// (a refresh replaced it, or the cache evicted it), nor one the cache could not keep with
/// its variants: both are asked before each coding is made, never only after.
///
/// A fill's gzip variant is made sooner, by the fill itself (`gzipped`), so that the
/// clients waiting on it get gzip too; the queue then makes only what is still pending.
final class VariantMaker: Sendable {
    /// How much work may wait.
    struct Limits: Sendable {
        /// Jobs queued or running, at most.
        var jobs: Int
        /// Identity bytes of the entries those jobs hold, at most.
        var bytes: Int

        /// Bounds of `jobs` jobs holding `bytes` bytes.
        init(jobs: Int = 256, bytes: Int = 32 * 1024 * 1024) {
            self.jobs = jobs
            self.bytes = bytes
        }
    }

    /// How a job ended (or did not start), for the metrics.
    enum JobResult: Int, CaseIterable, Sendable {
        /// Variants made and stored.
        case made
        /// Not queued: the queue was full.
        case dropped
        /// Its entry was no longer the one stored: nothing made, or nothing kept.
        case stale

        /// The metric's label.
        var label: String {
            switch self {
            case .made: "made"
            case .dropped: "dropped"
            case .stale: "stale"
            }
        }
    }

    /// Where a job's entry is kept, as the job asks it.
    struct Slot: Sendable {
        /// Whether the entry, with the variants it has, is still the one stored.
        var holds: @Sendable (CachedResponse) -> Bool
        /// Whether an entry holding this many bytes (body and variants) would be kept.
        var admits: @Sendable (Int) -> Bool
        /// Stores the entry with its variants, if the one they were made for is still stored;
        /// whether it did.
        var store: @Sendable (CachedResponse) -> Bool
    }

    /// No coding is expected to bring an answer below this fraction of its bytes (1/8):
    /// an entry that the cache would not keep even with variants this small is not compressed.
    static let smallestShare = 8

    /// The largest body a fill gzips itself, in bytes: the largest gzipped at the encoder's
    /// best level, which costs the clients waiting on the fill a few milliseconds; a larger
    /// one is answered identity until the queue has made its variants.
    static let inlineGzipLimit = ContentEncoder.bestGzipLimit

    private struct Backlog {
        var jobs = 0
        var bytes = 0
    }

    private let limits: Limits
    private let queue = DispatchQueue(label: "amodb-proxy.variants", qos: .utility)
    private let backlog = Mutex(Backlog())
    private let results = AtomicCounters(count: JobResult.allCases.count)
    /// Identity bytes handed to an encoder, once per coding made.
    private let encoded = Atomic<Int>(0)

    /// Answers whose variants the queue made and stored so far: what tests count.
    var compressions: Int { count(.made) }

    /// Jobs that ended (or were dropped) with `result` so far.
    func count(_ result: JobResult) -> Int {
        results.value(result.rawValue)
    }

    /// Identity bytes compressed so far, counted once per coding made (inline gzip included):
    /// the work done, whatever became of it.
    var compressedBytes: Int { encoded.load(ordering: .relaxed) }

    /// Jobs and identity bytes queued or running now.
    var queued: (jobs: Int, bytes: Int) {
        backlog.withLock { ($0.jobs, $0.bytes) }
    }

    /// A maker with nothing done yet, whose queue holds at most what `limits` allow.
    init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// The fewest bytes `entry` can hold once its pending codings are made (each at least
    /// `smallestShare` of the body): more than this, and the cache cannot keep it with them.
    static func leastByteCount(of entry: CachedResponse) -> Int {
        entry.byteCount + pending(entry).count * (entry.body.count / smallestShare)
    }

    /// The codings still to make for `entry`: every one the encoder makes (gzip, and br where
    /// brotli is installed) for one never compressed that is long enough.
    private static func pending(_ entry: CachedResponse) -> [ContentCoding] {
        guard let variants = entry.variants else {
            guard entry.body.count >= ContentVariants.defaultMinimumSize else { return [] }
            return [ContentCoding.gzip, .br].filter(ContentEncoder().codings.contains)
        }
        return [ContentCoding.gzip, .br].filter { variants.pending.contains($0) }
    }

    /// `entry` with its gzip variant, made here, on the caller's thread, with br pending:
    /// the one gzip variant of this answer, which the queue keeps byte for byte. `entry`
    /// unchanged when it has variants already, is too short to compress or longer than
    /// `inlineGzipLimit`, `admits` says the cache could not keep it with its variants
    /// (asked with `leastByteCount` before compressing), or zlib fails (the queue then
    /// makes every coding, as for any entry).
    func gzipped(_ entry: CachedResponse, admits: (Int) -> Bool) -> CachedResponse {
        guard entry.variants == nil,
            (ContentVariants.defaultMinimumSize...Self.inlineGzipLimit).contains(entry.body.count),
            admits(Self.leastByteCount(of: entry))
        else { return entry }
        encoded.add(entry.body.count, ordering: .relaxed)
        guard let variants = try? ContentVariants(compressing: entry.body, codings: .gzip) else { return entry }
        return entry.with(variants)
    }

    /// Queues a job that makes `entry`'s pending variants (all of them if it has none) and
    /// hands it back with them to `slot`. Nothing is queued when nothing is pending or the
    /// slot could not keep the entry with its variants; a job that does not fit is dropped.
    func make(_ entry: CachedResponse, in slot: Slot) {
        guard !Self.pending(entry).isEmpty, slot.admits(Self.leastByteCount(of: entry)) else { return }
        let bytes = entry.body.count
        let queued = backlog.withLock { backlog in
            guard backlog.jobs < limits.jobs, backlog.bytes + bytes <= limits.bytes else { return false }
            backlog.jobs += 1
            backlog.bytes += bytes
            return true
        }
        guard queued else {
            record(.dropped)
            return
        }
        queue.async { [self] in
            let result = run(entry, in: slot)
            backlog.withLock { backlog in
                backlog.jobs -= 1
                backlog.bytes -= bytes
            }
            // Counted once stored, so that a test waiting on the count then finds the variants.
            record(result)
        }
    }

    private func record(_ result: JobResult) {
        results.add(result.rawValue)
    }

    /// One job: each pending coding made in turn while the slot still holds `entry` and could
    /// keep it with the variants; then the variants that fit are stored. When compressing
    /// fails, that coding and those after it are not kept.
    private func run(_ entry: CachedResponse, in slot: Slot) -> JobResult {
        // Nothing is compressed here: with no coding asked, both stay pending.
        guard var variants = entry.variants ?? (try? ContentVariants(compressing: entry.body, codings: [])) else {
            return .stale
        }
        for coding in Self.pending(entry) {
            guard slot.holds(entry) else { return .stale }
            guard slot.admits(Self.leastByteCount(of: entry.with(variants))) else { break }
            encoded.add(entry.body.count, ordering: .relaxed)
            do {
                variants = try variants.completed(ContentCodingSet(coding))
            } catch {
                break
            }
        }
        return slot.store(entry.with(Self.fitting(variants, admits: slot.admits))) ? .made : .stale
    }

    /// `variants` complete (every coding tried, none pending) with as many of them kept as
    /// `admits` takes: all, else without br, else identity alone.
    static func fitting(_ variants: ContentVariants, admits: (Int) -> Bool) -> ContentVariants {
        let identity = variants.identity
        let candidates = [
            ContentVariants(identity: identity, gzip: variants.gzip, br: variants.br),
            ContentVariants(identity: identity, gzip: variants.gzip, br: nil),
        ]
        return candidates.first { admits($0.byteCount) } ?? ContentVariants(identity: identity, gzip: nil, br: nil)
    }

    /// Adds the queue's families to `/metrics`.
    func render(into out: inout PrometheusText) {
        out.counter(
            "amodb_proxy_variant_jobs_total",
            "Jobs of the compression queue, by result: made (variants stored), dropped (queue full), stale (entry replaced or evicted first).",
            JobResult.allCases.map { ([("result", $0.label)], Double(count($0))) })
        out.counter(
            "amodb_proxy_variant_compressed_bytes_total",
            "Identity bytes compressed into variants, once per coding made (the compression work done).",
            [([], Double(compressedBytes))])
        let now = queued
        out.gauge("amodb_proxy_variant_queue_jobs", "Compression jobs queued or running.", [([], Double(now.jobs))])
        out.gauge(
            "amodb_proxy_variant_queue_bytes", "Identity bytes of the entries the compression queue holds.",
            [([], Double(now.bytes))])
    }
}
