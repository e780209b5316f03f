import AmodbCompression
import Dispatch
import Synchronization

/// Makes each stored answer's gzip and br variants once, off the event loops: gzip -9 and
/// brotli 11 cost tens of milliseconds per answer, so they run one at a time on a serial
/// queue of their own; the caller stores the entry again with its variants if it is still
/// the one in the cache (a refresh meanwhile replaces it whole, and gets its own variants).
final class VariantMaker: Sendable {
    private let queue = DispatchQueue(label: "amodb-proxy.variants", qos: .utility)
    private let made = Atomic<Int>(0)

    /// Answers compressed so far (each one in every coding): what tests count.
    var compressions: Int { made.load(ordering: .relaxed) }

    /// A maker with nothing done yet.
    init() {}

    /// Makes `entry`'s variants on the maker's queue and hands it back with them to `store`.
    func make(_ entry: CachedResponse, store: @escaping @Sendable (CachedResponse) -> Void) {
        guard entry.variants == nil else { return }
        queue.async { [self] in
            let variants = (try? ContentVariants(compressing: entry.body))
                ?? ContentVariants(identity: entry.body, gzip: nil, br: nil)
            store(entry.with(variants))
            // Counted once stored, so that a test waiting on the count then finds the variants.
            made.add(1, ordering: .relaxed)
        }
    }
}
