/// A response to write: status, header fields and the whole body.
///
/// The server adds `Content-Length`, `Connection` and `Content-Encoding` (from
/// `contentEncoding`) itself and sends no body for `HEAD`; responders set everything else.
public struct HTTPResponse: Sendable {
    /// The status code, 100…599.
    public var status: Int
    /// Field lines the responder rendered as bytes itself: written first, before `headers`.
    public var renderedFields: RenderedFields
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// The body's content coding (RFC 9110 §8.4: `gzip`, `br`), or `nil` for identity:
    /// written as `Content-Encoding` when the response is, and read as a value (never
    /// parsed back from the fields) by whoever counts what was sent.
    public var contentEncoding: String?
    /// Close the connection after this response.
    public var closesConnection: Bool
    /// Abort the answer after this many body bytes: the head still announces the whole body,
    /// the bytes up to here are sent, then the connection closes, so the client sees an
    /// incomplete message (RFC 9112 §8), as when an origin fails mid-answer.
    public var abortsAfterBodyBytes: Int?
    /// Bits the application attaches for its own bookkeeping after the answer is made (the
    /// proxy: how its cache answered); the server never reads them. Plain bits, not an
    /// existential: every copy of a response on the hit path would pay for one. 0 when unset.
    public var annotation: UInt64

    public init(
        status: Int, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [],
        closesConnection: Bool = false
    ) {
        self.status = status
        self.renderedFields = RenderedFields()
        self.headers = headers
        self.body = body
        self.contentEncoding = nil
        self.closesConnection = closesConnection
        self.abortsAfterBodyBytes = nil
        self.annotation = 0
    }

    /// A JSON response.
    public static func json(_ status: Int, _ body: [UInt8], headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        var headers = headers
        headers.set("Content-Type", "application/json;charset=utf-8")
        return HTTPResponse(status: status, headers: headers, body: body)
    }
}

/// Reason phrases for the statuses this project sends (RFC 9110 §15).
public enum HTTPStatusText {
    /// The reason phrase of a status code; `Unknown` for others.
    public static func reason(_ status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 200: "OK"
        case 204: "No Content"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 402: "Payment Required"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 417: "Expectation Failed"
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
