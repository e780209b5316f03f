/// A response to write: status, header fields and the whole body.
///
/// The server adds `Content-Length`, `Connection` and `Content-Encoding` (from
/// `contentEncoding`) itself and sends no body for `HEAD`; responders set everything else.
/// An answer without content (1xx, 204, 304) gets none of the fields that describe content
/// (`Content-Length`, `Content-Encoding`, `Content-Type`), whatever the responder set.
public struct HTTPResponse: Sendable {
    /// The status code, 100…599.
    public var status: Int
    /// Field lines the responder rendered as bytes itself: written first, before `headers`.
    public var renderedFields: RenderedFields
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// The body's content coding (RFC 9110 §8.4: `gzip`, `br`), or `nil` for identity:
    /// written as `Content-Encoding` when the response is, and read as a value (never
    /// parsed back from the fields) by whoever counts what was sent. A 304 may keep the
    /// coding of the variant whose validator it confirms, for those counts; it is not
    /// written, as a 304 has no content (RFC 9110 §15.4.5).
    public var contentEncoding: String? {
        get { contentEncodingName.isEmpty ? nil : contentEncodingName }
        set { contentEncodingName = newValue ?? "" }
    }
    /// `contentEncoding`, empty for identity. Kept as a plain `String`: with a `String?`
    /// among its fields, the compiler builds every response in a temporary, then copies it
    /// out and destroys the temporary (a retain and a release of each of its arrays and
    /// strings, on every answer; Swift 6.3, `-O`): docs/performance.md, "Invariants".
    @usableFromInline var contentEncodingName: String
    /// What happens to the connection once this response is written.
    public var connection: ConnectionDisposition

    /// A response with everything given at once. (A response built empty and then set
    /// field by field is copied once more on its way out: a retain and a release of each of
    /// its arrays and strings, on every hit.)
    @inlinable
    public init(
        status: Int, renderedFields: RenderedFields = RenderedFields(), headers: HTTPHeaders = HTTPHeaders(),
        body: [UInt8] = [], contentEncoding: String? = nil, connection: ConnectionDisposition = .asRequested
    ) {
        self.status = status
        self.renderedFields = renderedFields
        self.headers = headers
        self.body = body
        self.contentEncodingName = contentEncoding ?? ""
        self.connection = connection
    }

    /// A JSON response.
    public static func json(_ status: Int, _ body: [UInt8], headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        var headers = headers
        headers.set("Content-Type", "application/json;charset=utf-8")
        return HTTPResponse(status: status, headers: headers, body: body)
    }
}

/// What the server does with a connection once a response is written.
public enum ConnectionDisposition: Sendable, Equatable {
    /// Keeps it open if the request asked for that (RFC 9112 §9.3), else closes it.
    case asRequested
    /// Closes it (`Connection: close`).
    case close
    /// Sends the head, which announces the whole body, and only this many body bytes, then
    /// closes: the client sees an incomplete message (RFC 9112 §8), as when an origin fails
    /// mid-answer. What a stand-in for a failing origin needs.
    case abortAfterBodyBytes(Int)

    /// Whether the connection closes after the response, whatever the request asked.
    public var closes: Bool { self != .asRequested }
}

/// Reason phrases of the status codes RFC 9110 §15 defines.
public enum HTTPStatusText {
    /// The reason phrase of a status code (RFC 9110 §15); `Unknown` for a code it does not define.
    public static func reason(_ status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 101: "Switching Protocols"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 203: "Non-Authoritative Information"
        case 204: "No Content"
        case 205: "Reset Content"
        case 206: "Partial Content"
        case 300: "Multiple Choices"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 305: "Use Proxy"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 402: "Payment Required"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 406: "Not Acceptable"
        case 407: "Proxy Authentication Required"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 410: "Gone"
        case 411: "Length Required"
        case 412: "Precondition Failed"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 415: "Unsupported Media Type"
        case 416: "Range Not Satisfiable"
        case 417: "Expectation Failed"
        case 421: "Misdirected Request"
        case 422: "Unprocessable Content"
        case 426: "Upgrade Required"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        default: "Unknown"
        }
    }
}
