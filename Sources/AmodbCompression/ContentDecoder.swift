/// Decodes a body sent with a content coding, never producing more than a cap: a
/// compressed body is untrusted input (a few KB of gzip can inflate to gigabytes).
public struct ContentDecoder: Sendable {
    /// The most bytes a decoded body may have; decoding stops and fails beyond it.
    public let maximumOutputSize: Int

    /// A decoder that refuses bodies decoding to more than `maximumOutputSize` bytes.
    public init(maximumOutputSize: Int) {
        precondition(maximumOutputSize >= 0, "maximumOutputSize must not be negative")
        self.maximumOutputSize = maximumOutputSize
    }

    /// The identity bytes of `bytes`, sent in `coding`. Throws when they are cut off,
    /// corrupt, followed by extra bytes, or longer than `maximumOutputSize`.
    public func decode(_ bytes: [UInt8], from coding: ContentCoding) throws(CompressionError) -> [UInt8] {
        switch coding {
        case .identity:
            guard bytes.count <= maximumOutputSize else {
                throw .outputTooLarge(.identity, limit: maximumOutputSize)
            }
            return bytes
        case .gzip:
            return try Gzip.decode(bytes, limit: maximumOutputSize)
        case .br:
            return try Brotli.decode(bytes, limit: maximumOutputSize)
        }
    }
}
