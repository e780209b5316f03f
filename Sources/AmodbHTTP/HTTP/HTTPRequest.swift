/// The HTTP version of a request (RFC 9112 §2.3); only 1.0 and 1.1 are served.
public enum HTTPVersion: Sendable, Equatable {
    case http1_0, http1_1

    /// As written on the wire: `HTTP/1.1`.
    public var text: String { self == .http1_0 ? "HTTP/1.0" : "HTTP/1.1" }
}

/// A parsed request head. The path is already percent-decoded once and checked
/// (no `..`, no encoded `/`, no NUL); the query is checked and decoded on demand.
public struct HTTPRequest: Sendable {
    /// The method token as sent (methods are case-sensitive, RFC 9110 §9.1).
    public var method: String
    /// The request target exactly as sent.
    public var target: String
    /// The decoded path, starting with `/`.
    public var path: String
    /// The query, a slice of `target`.
    public var query: RequestQuery
    public var version: HTTPVersion
    public var headers: HTTPHeaders
    /// The peer's address (`127.0.0.1`), for logs and per-client limits.
    public var peerAddress: String
    /// The body, when the head framed one with `Content-Length` (at most
    /// `HTTPLimits.maxBodyBytes`); `nil` otherwise (no array to retain and release on the
    /// requests that have none, nearly all). A chunked body is read and dropped
    /// (`bodyWasChunked`): the routes that take a body ask for a length (411).
    public var body: [UInt8]? = nil
    /// Whether a chunked body was sent (and dropped).
    public var bodyWasChunked = false

    public init(
        method: String, target: String, path: String, query: RequestQuery = RequestQuery(),
        version: HTTPVersion = .http1_1, headers: HTTPHeaders = HTTPHeaders(), peerAddress: String = ""
    ) {
        self.method = method
        self.target = target
        self.path = path
        self.query = query
        self.version = version
        self.headers = headers
        self.peerAddress = peerAddress
    }

    /// A request for `target` (origin or absolute form), read as the server reads one.
    public init(
        method: String, target: String, headers: HTTPHeaders = HTTPHeaders(), peerAddress: String = ""
    ) throws(HTTPParseError) {
        let (path, query) = try RequestTarget.parse(target)
        self.init(method: method, target: target, path: path, query: query, headers: headers, peerAddress: peerAddress)
    }

    /// The first value of a query parameter.
    public func queryValue(_ name: String) -> String? {
        query.value(of: name)
    }
}
