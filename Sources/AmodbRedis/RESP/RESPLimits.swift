/// How much a reply may claim before the parser refuses it: what stands between a
/// broken or hostile server (or a man in the middle of a private network) and our memory.
///
/// The defaults fit what the proxy's own commands return: a cached body of a few
/// megabytes at most (`GET` of an envelope; the proxy sets `maxBulkBytes` to the largest
/// envelope it stores), short arrays from its scripts and subscriptions. A header that
/// announces more is refused as soon as it is read, before anything is allocated for it.
public struct RESPLimits: Sendable, Equatable {
    /// Largest bulk string, in bytes.
    public var maxBulkBytes = 4 * 1024 * 1024
    /// Most elements in one array (nested arrays count their own elements separately).
    public var maxArrayCount = 1024
    /// Most values in one reply, every nested element and array counted: with nesting, an
    /// array of arrays could otherwise hold `maxArrayCount` to the power of `maxDepth`.
    public var maxReplyElements = 4096
    /// Deepest nesting of arrays; the proxy's replies are at most two deep.
    public var maxDepth = 8
    /// Longest line (simple string, error, integer, length header), in bytes, without type byte and CRLF.
    public var maxLineBytes = 64 * 1024
    /// Largest whole reply (all its nested elements together), in bytes on the wire.
    public var maxReplyBytes = 4 * 1024 * 1024 + 64 * 1024

    /// The defaults.
    public init() {}

    /// These limits with room for bulk strings of `bytes` (and a reply holding one).
    public func allowingBulkStrings(of bytes: Int) -> RESPLimits {
        var limits = self
        limits.maxBulkBytes = max(0, bytes)
        limits.maxReplyBytes = max(0, bytes) + 64 * 1024
        return limits
    }
}
