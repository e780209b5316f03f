/// One answer in every coding worth sending, made once when the answer is stored:
/// the identity bytes always, and gzip and br when the answer is long enough and the
/// coding makes it smaller. Variants of one answer are made together and replaced
/// together, so they always hold the same content.
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

    /// Compresses `identity` in gzip and br with `encoder` (gzip -9, brotli 11): slow
    /// on purpose, so call it off the event loops, once per stored answer. Nothing is
    /// made below `minimumSize` bytes, and a variant not smaller than the identity
    /// bytes is dropped (a client that accepts it gets identity, just as small).
    public init(
        compressing identity: [UInt8], minimumSize: Int = defaultMinimumSize,
        encoder: ContentEncoder = ContentEncoder()
    ) throws(CompressionError) {
        guard identity.count >= minimumSize else {
            self.init(identity: identity, gzip: nil, br: nil)
            return
        }
        let gzip = try encoder.encode(identity, as: .gzip)
        let br = try encoder.encode(identity, as: .br)
        self.init(
            identity: identity, gzip: gzip.count < identity.count ? gzip : nil,
            br: br.count < identity.count ? br : nil)
    }

    /// Variants made earlier (restored from a snapshot, say), taken as they are.
    public init(identity: [UInt8], gzip: [UInt8]?, br: [UInt8]?) {
        self.identity = identity
        self.gzip = gzip
        self.br = br
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
