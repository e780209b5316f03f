import Synchronization

/// Where an application keeps what it reads from a request's head, for the requests that
/// repeat that head byte for byte on the same connection: the parser hands them the head it
/// parsed the first time (`RequestHeadParser`), and with it the same memo.
///
/// The server never reads it. What is kept must be a function of the head's bytes and of
/// what else does not change while the connection lives (its peer, the configuration): a
/// repeated request then needs none of it read again. Kept once (the first value stays),
/// read with a plain load.
public final class HeadMemo: Sendable {
    /// The kept object, retained, as the bits of its address (0: nothing yet).
    private let kept = Atomic<UInt>(0)

    public init() {}

    deinit {
        if let pointer = UnsafeRawPointer(bitPattern: kept.load(ordering: .acquiring)) {
            Unmanaged<AnyObject>.fromOpaque(pointer).release()
        }
    }

    /// What was kept, if anything: the application casts it back to its own class.
    public var value: AnyObject? {
        guard let pointer = UnsafeRawPointer(bitPattern: kept.load(ordering: .acquiring)) else { return nil }
        return Unmanaged<AnyObject>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// Keeps `value` if nothing is kept yet (it is immutable and sendable: read from any
    /// thread that has the request), and returns what is kept.
    @discardableResult
    public func keep(_ value: any AnyObject & Sendable) -> AnyObject {
        let retained = Unmanaged<AnyObject>.passRetained(value)
        let (exchanged, original) = kept.compareExchange(
            expected: 0, desired: UInt(bitPattern: retained.toOpaque()), successOrdering: .acquiringAndReleasing,
            failureOrdering: .acquiring)
        guard !exchanged, let original = UnsafeRawPointer(bitPattern: original) else { return value }
        retained.release()
        return Unmanaged<AnyObject>.fromOpaque(original).takeUnretainedValue()
    }
}
