/// Limits every connection obeys; each is a setting of the application (the proxy: `ProxyConfiguration`).
/// Inspired by swift-nio's `NIOHTTPDecoderLimitConfiguration`.
public struct HTTPLimits: Sendable, Equatable {
    /// Longest request line, in bytes; longer → 414.
    public var maxRequestLineBytes = 8 * 1024
    /// Largest header block after the request line, in bytes; larger → 431.
    public var maxHeaderBytes = 16 * 1024
    /// Most header fields in one request; more → 431.
    public var maxHeaderCount = 100
    /// Largest body a GET or HEAD may carry, in bytes: read and discarded; larger → 413 and close.
    public var maxBodyBytes = 8 * 1024
    /// Requests read ahead of their responses on one connection (pipelining); reading pauses beyond.
    public var maxPipelinedRequests = 16
    /// Open client connections at most; new ones beyond are answered 503 and closed.
    public var maxConnections = 10_000

    public init() {}

    /// Bytes of unparsed input a connection holds at most; reading pauses beyond. At least
    /// one whole head (`minimumReadBufferBytes`); more lets pipelined requests queue up.
    public var maxReadBufferBytes = 32 * 1024

    /// The smallest read buffer that holds a head at the limits: request line, header block, CR LF pairs.
    public var minimumReadBufferBytes: Int { maxRequestLineBytes + maxHeaderBytes + 4 }

    /// The read buffer in force: never below one whole head.
    var readBufferBytes: Int { max(maxReadBufferBytes, minimumReadBufferBytes) }
}

/// Deadlines every connection obeys, in seconds; each is a setting.
public struct HTTPTimeouts: Sendable, Equatable {
    /// A request head must be complete this long after its first byte arrived (slowloris); then 408.
    public var requestHeadSeconds: Double = 10
    /// A request body must be complete this long after its head arrived (a body trickled a
    /// byte at a time); then 408 and close. Body bytes are not activity for `idleSeconds`.
    public var requestBodySeconds: Double = 10
    /// A head or body still arriving after this long (or a new connection that has not sent
    /// its first head) is slow: when the server is at its
    /// connection cap, such connections (then idle keep-alive ones) are closed, oldest
    /// first, to make room for a newcomer instead of refusing it.
    public var slowPeerSeconds: Double = 1
    /// An idle keep-alive connection is closed after this long.
    public var idleSeconds: Double = 60
    /// A client that stops reading our response is dropped after this long.
    public var writeSeconds: Double = 30

    public init() {}
}
