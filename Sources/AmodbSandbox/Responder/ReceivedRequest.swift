public import AmodbHTTP

/// A request as the sandbox received it, so tests can assert what the proxy sent
/// upstream (which headers, which query, never the client's credentials).
public struct ReceivedRequest: Sendable {
    /// The method token as sent.
    public var method: String
    /// The request target exactly as sent (path and raw query).
    public var target: String
    /// The decoded path, e.g. `/3/movie/550`.
    public var path: String
    /// The decoded query pairs, in order.
    public var query: [(name: String, value: String)]
    /// Every header field, in order, duplicates kept.
    public var headers: HTTPHeaders
    /// When the sandbox received it, on the clock its rate limit reads: what a test needs
    /// to count the calls of any 60-second window as amodb counts them.
    public var receivedAt: ContinuousClock.Instant
    /// Whether it was refused with 429 for being over the key's limit: the calls a proxy
    /// must never make.
    public var overLimit = false

    /// Copies what the sandbox keeps of a request received at `receivedAt`.
    public init(_ request: HTTPRequest, receivedAt: ContinuousClock.Instant = .now) {
        self.receivedAt = receivedAt
        method = request.method
        target = request.target
        path = request.path
        query = request.query.items
        headers = request.headers
    }

    /// The first value of a query parameter, or `nil`.
    public func queryValue(_ name: String) -> String? {
        query.first { $0.name == name }?.value
    }
}
