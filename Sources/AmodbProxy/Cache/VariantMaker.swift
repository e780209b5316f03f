import AmodbCompression
import Dispatch
import Synchronization

/// Makes each stored answer's gzip and br variants once, off the event loops: gzip -9 and
/// brotli 11 cost tens of milliseconds per answer, so they run one at a time on a serial
/// queue of their own; the caller stores the entry again with its variants if it is still
/// the one in the cache (a refresh meanwhile replaces it whole, and gets its own variants).
///
/// A fill's gzip variant is made sooner, by the fill itself (`gzipped`), so that the
/// clients waiting on it get gzip too; the queue then makes only what is still pending.
final class VariantMaker: Sendable {
    /// The largest body a fill gzips itself, in bytes: gzip -9 takes a few milliseconds
    /// for an answer this size (the clients waiting on the fill wait that much longer);
    /// a larger one is answered identity until the queue has made its variants.
    static let inlineGzipLimit = 128 * 1024

    private let queue = DispatchQueue(label: "amodb-proxy.variants", qos: .utility)
    private let made = Atomic<Int>(0)

    /// Answers compressed so far (each one in every coding): what tests count.
    var compressions: Int { made.load(ordering: .relaxed) }

    /// A maker with nothing done yet.
    init() {}

    /// `entry` with its gzip variant, made here, on the caller's thread, with br pending:
    /// the one gzip variant of this answer, which the queue keeps byte for byte. `entry`
    /// unchanged when it is too short to compress, longer than `inlineGzipLimit`, or
    /// zlib fails (the queue then makes every coding, as for any entry).
    func gzipped(_ entry: CachedResponse) -> CachedResponse {
        guard entry.variants == nil, (ContentVariants.defaultMinimumSize...Self.inlineGzipLimit).contains(entry.body.count),
              let variants = try? ContentVariants(compressing: entry.body, codings: .gzip)
        else { return entry }
        return entry.with(variants)
    }

    /// Makes `entry`'s pending variants (all of them if it has none) on the maker's queue
    /// and hands it back with them to `store`.
    func make(_ entry: CachedResponse, store: @escaping @Sendable (CachedResponse) -> Void) {
        if let variants = entry.variants, variants.pending.isEmpty { return }
        queue.async { [self] in
            store(entry.with(Self.completed(entry)))
            // Counted once stored, so that a test waiting on the count then finds the variants.
            made.add(1, ordering: .relaxed)
        }
    }

    /// Every variant of `entry`; those it has are kept as they are, and when compressing
    /// fails, the others are not kept.
    private static func completed(_ entry: CachedResponse) -> ContentVariants {
        do {
            if let variants = entry.variants { return try variants.completed() }
            return try ContentVariants(compressing: entry.body)
        } catch {
            return ContentVariants(identity: entry.body, gzip: entry.variants?.gzip, br: entry.variants?.br)
        }
    }
}
