import CBrotli

/// Compresses an answer once, at the best settings, for every client that accepts the
/// coding: the work is paid per stored answer, not per request, so it can be slow.
public struct ContentEncoder: Sendable {
    /// zlib's compression level for gzip: 9, the smallest output.
    public static let gzipLevel: Int32 = 9
    /// Brotli's quality: 11, the smallest output.
    public static let brotliQuality: Int32 = 11
    /// Brotli's window, in bits: 22 (4 MiB), brotli's default and more than any answer
    /// needs; large windows (RFC 7932 allows up to 24 bits, the extension 30) stay off.
    public static let brotliWindowBits: Int32 = 22

    /// An encoder with the settings above.
    public init() {}

    /// `bytes` in `coding`: identity returns them as they are; gzip is one complete
    /// gzip member at level 9; br is brotli at quality 11 in text mode, tuned for
    /// UTF-8 such as JSON.
    public func encode(_ bytes: [UInt8], as coding: ContentCoding) throws(CompressionError) -> [UInt8] {
        switch coding {
        case .identity:
            bytes
        case .gzip:
            try Gzip.encode(bytes, level: Self.gzipLevel)
        case .br:
            try Brotli.encode(
                bytes, quality: Self.brotliQuality, windowBits: Self.brotliWindowBits, mode: BROTLI_MODE_TEXT)
        }
    }
}
