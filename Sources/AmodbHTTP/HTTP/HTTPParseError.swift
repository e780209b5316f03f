/// A request the server refuses before routing. The connection is answered with
/// `status` and closed: after a framing error nothing later on it can be trusted.
public struct HTTPParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The HTTP status to answer with (400, 408, 413, 414, 417, 431, 501, 505).
    public let status: Int
    /// What was wrong, for the body of the answer (worded by the server's `errorResponse`).
    public let message: String

    init(_ status: Int, _ message: String) {
        self.status = status
        self.message = message
    }

    public var description: String { "\(status): \(message)" }

    static let malformedRequestLine = HTTPParseError(400, "Malformed request line.")
    static let requestLineTooLong = HTTPParseError(414, "The request line is too long.")
    static let headerTooLarge = HTTPParseError(431, "The request header fields are too large.")
    static let tooManyHeaders = HTTPParseError(431, "The request has too many header fields.")
    static let malformedHeader = HTTPParseError(400, "Malformed header field.")
    static let obsoleteLineFolding = HTTPParseError(400, "Obsolete line folding is not accepted.")
    static let invalidTarget = HTTPParseError(400, "Invalid request target.")
    static let invalidPath = HTTPParseError(400, "Invalid request path.")
    static let invalidQuery = HTTPParseError(400, "Invalid query string.")
    static let unsupportedVersion = HTTPParseError(505, "Only HTTP/1.0 and HTTP/1.1 are supported.")
    static let http2Preface = HTTPParseError(505, "HTTP/2 is not supported here; use HTTP/1.1.")
    static let missingHost = HTTPParseError(400, "HTTP/1.1 requests need exactly one Host header.")
    static let conflictingFraming = HTTPParseError(
        400, "Content-Length and Transfer-Encoding together are not accepted.")
    static let transferEncoding = HTTPParseError(501, "Only the chunked transfer coding is supported on requests.")
    static let invalidTransferEncoding = HTTPParseError(400, "Transfer-Encoding must list chunked once, last.")
    static let transferEncodingOnHTTP10 = HTTPParseError(400, "Transfer-Encoding is not accepted on HTTP/1.0 requests.")
    static let malformedChunk = HTTPParseError(400, "Malformed chunked body.")
    static let trailersTooLarge = HTTPParseError(431, "The request trailer fields are too large.")
    static let headTimedOut = HTTPParseError(408, "The request head did not arrive in time.")
    static let bodyTimedOut = HTTPParseError(408, "The request body did not arrive in time.")
    static let invalidContentLength = HTTPParseError(400, "Invalid Content-Length.")
    static let bodyTooLarge = HTTPParseError(413, "The request body is too large.")
    static let unsupportedExpectation = HTTPParseError(417, "Only Expect: 100-continue is supported.")
}
