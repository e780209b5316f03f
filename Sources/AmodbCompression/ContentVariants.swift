/// One answer in every coding worth sending: the identity bytes always, and gzip and br
/// when the answer is long enough and the coding makes it smaller. Variants of one answer
/// are made for the same bytes and replaced together, so they always hold the same
/// content. They may be made in two steps (gzip first, for the clients waiting on the
/// answer; br after, off the event loops): `pending` names the codings still to make.
public struct ContentVariants: Sendable, Equatable {
    /// Answers shorter than this, in bytes, stay identity: compressing them saves a few
    /// bytes at most, and the proxy's own JSON errors are this short (nginx's
    /// `gzip_min_length` in the bench is the same 256).
    public static let defaultMinimumSize = 256

    /// The bytes as amodb sent them.
    public let identity: [UInt8]
    /// The gzip variant, if one is kept.
    public let gzip: [UInt8]?
    /// The brotli variant, if one is kept.
    public let br: [UInt8]?
    /// The codings not tried yet (`completed()` makes them); empty once every coding was
    /// tried, whether its variant was kept or dropped.
    public let pending: ContentCodingSet

    /// Compresses `identity` in `codings` (every coding unless told) with `encoder` (its
    /// best settings up to a size, cheaper ones above): slow on purpose, so call it off
    /// the event loops, once per stored answer; the other codings stay `pending`. Nothing
    /// is made below `minimumSize` bytes (and nothing is left pending), and a variant not
    /// smaller than the identity bytes is dropped (a client that accepts it gets identity,
    /// just as small). A coding `encoder` does not make (br without brotli) is neither made
    /// nor pending, so it is never offered.
    public init(
        compressing identity: [UInt8], codings: ContentCodingSet = .all, minimumSize: Int = defaultMinimumSize,
        encoder: ContentEncoder = ContentEncoder()
    ) throws(CompressionError) {
        guard identity.count >= minimumSize else {
            self.init(identity: identity, gzip: nil, br: nil)
            return
        }
        // Only what the encoder makes is pending: without brotli, br is never to come.
        let pending = encoder.codings.subtracting(.identity)
        self = try ContentVariants(identity: identity, gzip: nil, br: nil, pending: pending)
            .completed(codings, encoder: encoder)
    }

    /// Variants made earlier (restored from a snapshot, say), taken as they are: none pending.
    public init(identity: [UInt8], gzip: [UInt8]?, br: [UInt8]?) {
        self.init(identity: identity, gzip: gzip, br: br, pending: [])
    }

    private init(identity: [UInt8], gzip: [UInt8]?, br: [UInt8]?, pending: ContentCodingSet) {
        self.identity = Self.compacted(identity)
        self.gzip = gzip.map(Self.compacted)
        self.br = br.map(Self.compacted)
        self.pending = pending
    }

    /// `bytes` in a buffer of its own size when it holds much more: the compressors write
    /// into a buffer of their worst-case bound, and a body read in chunks grows by
    /// doubling, so a kept variant would otherwise hold about twice its bytes for as long
    /// as it is stored. A buffer already near its size is kept, not copied.
    private static func compacted(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.capacity - bytes.count > 64 else { return bytes }
        return [UInt8](unsafeUninitializedCapacity: bytes.count) { buffer, count in
            count = buffer.initialize(fromContentsOf: bytes)
        }
    }

    /// These variants with the pending codings among `codings` made too; the variants made
    /// already are kept byte for byte (a client may hold their tags).
    public func completed(
        _ codings: ContentCodingSet = .all, encoder: ContentEncoder = ContentEncoder()
    ) throws(CompressionError) -> ContentVariants {
        let making = pending.intersection(codings)
        var gzip = gzip
        var br = br
        if making.contains(.gzip) { gzip = try Self.smaller(identity, as: .gzip, encoder: encoder) }
        if making.contains(.br) { br = try Self.smaller(identity, as: .br, encoder: encoder) }
        return ContentVariants(identity: identity, gzip: gzip, br: br, pending: pending.subtracting(making))
    }

    /// `identity` in `coding`, if that is smaller and `encoder` makes that coding.
    private static func smaller(
        _ identity: [UInt8], as coding: ContentCoding, encoder: ContentEncoder
    ) throws(CompressionError) -> [UInt8]? {
        guard encoder.codings.contains(coding) else { return nil }
        let bytes = try encoder.encode(identity, as: coding)
        return bytes.count < identity.count ? bytes : nil
    }

    /// The codings this answer has, to negotiate among.
    public var available: ContentCodingSet {
        var codings: ContentCodingSet = .identity
        if gzip != nil { codings.insert(.gzip) }
        if br != nil { codings.insert(.br) }
        return codings
    }

    /// The bytes to send in `coding`, or `nil` if that variant was not kept.
    public func bytes(for coding: ContentCoding) -> [UInt8]? {
        switch coding {
        case .identity: identity
        case .gzip: gzip
        case .br: br
        }
    }

    /// All the bytes the answer holds, every variant counted: what it costs in the
    /// cache's byte budget.
    public var byteCount: Int {
        identity.count + (gzip?.count ?? 0) + (br?.count ?? 0)
    }
}
