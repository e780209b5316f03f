/// The HTTP version of a request (RFC 9112 §2.3); only 1.0 and 1.1 are served.
public enum HTTPVersion: Sendable, Equatable {
    case http1_0, http1_1

    /// As written on the wire: `HTTP/1.1`.
    public var text: String { self == .http1_0 ? "HTTP/1.0" : "HTTP/1.1" }
}

/// A parsed request head. The path is already percent-decoded once and checked
/// (no `..`, no encoded `/`, no NUL); the query is split into decoded pairs.
public struct HTTPRequest: Sendable {
    /// The method token as sent (methods are case-sensitive, RFC 9110 §9.1).
    public var method: String
    /// The request target exactly as sent.
    public var target: String
    /// The decoded path, starting with `/`.
    public var path: String
    /// The decoded query pairs, in order (`a=1&b=2`).
    public var query: [(name: String, value: String)]
    public var version: HTTPVersion
    public var headers: HTTPHeaders
    /// The peer's address (`127.0.0.1`), for logs and per-client limits.
    public var peerAddress: String
    /// The index of the event loop answering this request (0 ..< `HTTPServer.eventLoopCount()`),
    /// while the responder runs on that loop's queue, within `respond(to:later:)`: bookkeeping
    /// kept per loop then has a single writer and needs no lock. `nil` for a request the
    /// server did not read (tests), and never valid in a later delivery, which runs elsewhere.
    public var loopIndex: Int?
    /// The memo of this head on its connection (`HeadMemo`): the same for every request that
    /// repeats the head byte for byte there. `nil` when the head is not remembered (a long
    /// head, or a request the server did not read).
    public var headMemo: HeadMemo?

    public init(
        method: String, target: String, path: String, query: [(name: String, value: String)],
        version: HTTPVersion = .http1_1, headers: HTTPHeaders = HTTPHeaders(), peerAddress: String = "",
        headMemo: HeadMemo? = nil
    ) {
        self.method = method
        self.target = target
        self.path = path
        self.query = query
        self.version = version
        self.headers = headers
        self.peerAddress = peerAddress
        self.loopIndex = nil
        self.headMemo = headMemo
    }

    /// The first value of a query parameter.
    public func queryValue(_ name: String) -> String? {
        query.first { $0.name == name }?.value
    }
}
