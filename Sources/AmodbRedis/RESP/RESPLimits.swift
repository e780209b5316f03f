/// How much a reply may claim before the parser refuses it: what stands between a
/// broken or hostile server (or a man in the middle of a private network) and our memory.
public struct RESPLimits: Sendable, Equatable {
    /// Largest bulk string, in bytes. A cached amodb body is tens of kilobytes; 64 MiB is far above.
    public var maxBulkBytes = 64 * 1024 * 1024
    /// Most elements in one array (nested arrays count their own elements separately).
    public var maxArrayCount = 1024 * 1024
    /// Deepest nesting of arrays; a script's reply is rarely deeper than 3.
    public var maxDepth = 32
    /// Longest line (simple string, error, integer, length header), in bytes, without type byte and CRLF.
    public var maxLineBytes = 64 * 1024
    /// Largest whole reply (all its nested elements together), in bytes on the wire.
    public var maxReplyBytes = 128 * 1024 * 1024

    /// The defaults.
    public init() {}
}
