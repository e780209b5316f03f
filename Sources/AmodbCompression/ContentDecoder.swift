/// Decodes a body sent with a content coding, never producing more than a cap: a
/// compressed body is untrusted input (a few KB of gzip can inflate to gigabytes).
public struct ContentDecoder: Sendable {
    /// Which framings of a gzip body are read (RFC 1952 §2.2, §2.3).
    public enum GzipFraming: Sendable, Hashable {
        /// Any number of members, their headers with any optional field, read as one body,
        /// as gzip(1) reads them.
        case anyMembers
        /// Exactly one member whose header carries no optional field (FLG has no bit set but
        /// FTEXT: no FEXTRA, FNAME, FCOMMENT or FHCRC, no reserved bit), and nothing after its
        /// trailer; anything else throws `CompressionError.notPlainSingleMember`. It is what
        /// `ContentEncoder` writes, and what every client reads whole: libcurl and zlib loops
        /// that stop at the end of the first member read anything else short (two members,
        /// the first empty, are the body to gzip(1) and nothing to them).
        case plainSingleMember
    }

    /// The most bytes a decoded body may have; decoding stops and fails beyond it.
    public let maximumOutputSize: Int
    /// Which framings of a gzip body are read; br has one framing only.
    public let gzipFraming: GzipFraming
    /// Brotli, or `nil` where it is not installed: br bodies are then not read.
    let brotli: Brotli?

    /// A decoder that refuses bodies decoding to more than `maximumOutputSize` bytes, and
    /// gzip bodies framed otherwise than `gzipFraming` allows (any members unless told).
    public init(maximumOutputSize: Int, gzipFraming: GzipFraming = .anyMembers) {
        self.init(maximumOutputSize: maximumOutputSize, gzipFraming: gzipFraming, brotli: Brotli.system)
    }

    /// A decoder as above using `brotli` (none: one that reads no br, as where libbrotli1 is missing).
    init(maximumOutputSize: Int, gzipFraming: GzipFraming = .anyMembers, brotli: Brotli?) {
        precondition(maximumOutputSize >= 0, "maximumOutputSize must not be negative")
        self.maximumOutputSize = maximumOutputSize
        self.gzipFraming = gzipFraming
        self.brotli = brotli
    }

    /// The identity bytes of `bytes`, sent in `coding`. Throws when they are cut off,
    /// corrupt, followed by extra bytes, longer than `maximumOutputSize`, or gzip framed
    /// otherwise than `gzipFraming` allows; br throws `CompressionError.unavailable(.br)`
    /// where brotli is not installed.
    public func decode(_ bytes: [UInt8], from coding: ContentCoding) throws(CompressionError) -> [UInt8] {
        switch coding {
        case .identity:
            guard bytes.count <= maximumOutputSize else {
                throw .outputTooLarge(.identity, limit: maximumOutputSize)
            }
            return bytes
        case .gzip:
            return try Gzip.decode(bytes, limit: maximumOutputSize, framing: gzipFraming)
        case .br:
            guard let brotli else { throw .unavailable(.br) }
            return try brotli.decode(bytes, limit: maximumOutputSize)
        }
    }
}
