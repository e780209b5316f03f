/// Compresses an answer once, for every client that accepts the coding: the work is paid
/// per stored answer, not per request, so it may be slow, but not without bound. The
/// best settings (gzip 9, brotli 11) are used up to a size each; a larger body gets a
/// cheaper setting, so that no single answer costs more than tens of milliseconds of a
/// core (docs/caching.md, "Levels by size", has the measurements behind the sizes).
///
/// br is made only where the system's brotli (Debian libbrotli1) could be loaded; without
/// it `codings` leaves br out, no variant is made in it, and so no client is sent it.
public struct ContentEncoder: Sendable {
    /// zlib's compression level for gzip up to `bestGzipLimit`: 9, the smallest output.
    public static let gzipLevel: Int32 = 9
    /// The largest body gzipped at `gzipLevel`, in bytes.
    public static let bestGzipLimit = 128 * 1024
    /// zlib's level for a larger body: 6, zlib's default.
    public static let largeGzipLevel: Int32 = 6
    /// Brotli's quality up to `bestBrotliLimit`: 11, the smallest output.
    public static let brotliQuality: Int32 = 11
    /// The largest body compressed at `brotliQuality`, in bytes.
    public static let bestBrotliLimit = 64 * 1024
    /// Brotli's quality for a larger body: 5, far cheaper than 11 and still smaller than gzip.
    public static let largeBrotliQuality: Int32 = 5
    /// Brotli's window, in bits: 22 (4 MiB), brotli's default and more than any answer
    /// needs; large windows (RFC 7932 allows up to 24 bits, the extension 30) stay off.
    public static let brotliWindowBits: Int32 = 22

    /// Brotli, or `nil` where it is not installed.
    let brotli: Brotli?

    /// An encoder with the settings above, using the process's brotli if it has one.
    public init() {
        self.init(brotli: Brotli.system)
    }

    /// An encoder using `brotli` (none: one that makes no br, as where libbrotli1 is missing).
    init(brotli: Brotli?) {
        self.brotli = brotli
    }

    /// The codings this encoder makes: identity and gzip always, br where brotli is installed.
    public var codings: ContentCodingSet {
        brotli == nil ? [.identity, .gzip] : .all
    }

    /// Why this process makes no br (the package to install, and what loading it said), or
    /// `nil` when it makes br: for a line in the log when a program starts.
    public static var brotliUnavailability: String? { Brotli.unavailability }

    /// `bytes` in `coding`: identity returns them as they are; gzip is one complete
    /// gzip member; br is brotli in text mode, tuned for UTF-8 such as JSON. The level
    /// or quality is the one for `bytes.count` (`gzipLevel(forSize:)`, `brotliQuality(forSize:)`).
    /// br throws `CompressionError.unavailable(.br)` when `codings` has no br.
    public func encode(_ bytes: [UInt8], as coding: ContentCoding) throws(CompressionError) -> [UInt8] {
        switch coding {
        case .identity:
            return bytes
        case .gzip:
            return try Gzip.encode(bytes, level: Self.gzipLevel(forSize: bytes.count))
        case .br:
            guard let brotli else { throw .unavailable(.br) }
            return try brotli.encode(
                bytes, quality: Self.brotliQuality(forSize: bytes.count), windowBits: Self.brotliWindowBits,
                mode: LibBrotli.modeText)
        }
    }

    /// The zlib level a body of `size` bytes is gzipped at.
    public static func gzipLevel(forSize size: Int) -> Int32 {
        size <= bestGzipLimit ? gzipLevel : largeGzipLevel
    }

    /// The brotli quality a body of `size` bytes is compressed at.
    public static func brotliQuality(forSize size: Int) -> Int32 {
        size <= bestBrotliLimit ? brotliQuality : largeBrotliQuality
    }
}
