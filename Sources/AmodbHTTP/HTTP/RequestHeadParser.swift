import AmodbBytes
import Glibc

/// How the body after a request head is delimited (RFC 9112 §6.3).
enum BodyFraming: Sendable, Equatable {
    /// `Content-Length` bytes (0: no body).
    case length(Int)
    /// The chunked transfer coding, read by `ChunkedBodyParser`.
    case chunked
}

/// A request head read off the wire, with what the connection needs for framing.
struct ParsedHead: Sendable {
    /// The request as the responder sees it (`peerAddress` is set by the connection's state machine).
    var request: HTTPRequest
    /// The body that follows the head (read and discarded: GET and HEAD carry no meaning in one).
    var body: BodyFraming
    /// Whether the connection stays open after the response (RFC 9112 §9.3).
    var keepAlive: Bool
    /// `Expect: 100-continue` with a body: send `100 Continue` before reading it.
    var expectsContinue: Bool

    /// Moves the request out, leaving an empty one (a copy would retain each of its strings
    /// and arrays, and destroying the head release them again).
    mutating func takeRequest() -> HTTPRequest {
        var taken = HTTPRequest(method: "", target: "", path: "")
        swap(&taken, &request)
        return taken
    }
}

/// Parses HTTP/1.1 request heads (RFC 9112 §2–§6) from bytes. A pure value: it never
/// touches a socket. It remembers how far it has looked for the end of the head, so
/// a head arriving a byte at a time costs linear time, not quadratic.
struct RequestHeadParser: Sendable {
    /// Outcome of one call.
    enum Outcome: Sendable {
        /// No complete head yet; call again with more bytes.
        case needMore
        /// A complete head that took `consumed` bytes from the start given.
        case complete(ParsedHead, consumed: Int)
    }

    let limits: HTTPLimits
    /// Bytes already searched for the request line's LF, from the head's start.
    private var lineScanned = 0
    /// Bytes already searched for the blank line, from the head's start.
    private var scanned = 0
    init(limits: HTTPLimits) {
        self.limits = limits
    }

    /// Looks for a complete head in `buffer[start...]`. Throws for anything malformed
    /// or over a limit; after a throw the connection must be answered and closed.
    mutating func parse(_ buffer: [UInt8], from start: Int) throws(HTTPParseError) -> Outcome {
        try parse(buffer.span.extracting(start...))
    }

    /// The same, from bytes in place (the head starts at the first of them).
    mutating func parse(_ bytes: Span<UInt8>) throws(HTTPParseError) -> Outcome {
        // RFC 9112 §2.2: a server SHOULD ignore at least one empty line before the request line.
        var headStart = 0
        while headStart + 1 < bytes.count, bytes[headStart] == cr, bytes[headStart + 1] == lf, headStart < 8 {
            headStart += 2
        }
        // The request line, CR LF included, ends within `maxRequestLineBytes + 2` bytes of the start;
        // the empty lines skipped above count against it, so a head never outgrows
        // `HTTPLimits.readBufferBytes`, where `Connection` stops reading and would wait for nothing.
        // No byte past that window is looked at: a whole buffer and the same bytes in pieces must
        // give the same answer (here 414, never 400 for a bare LF just beyond the limit).
        let lineWindow = limits.maxRequestLineBytes + 2
        guard let lineEnd = firstLineFeed(bytes, from: max(headStart, lineScanned), end: min(bytes.count, lineWindow))
        else {
            if bytes.count >= lineWindow { throw .requestLineTooLong }
            lineScanned = bytes.count  // a line arriving a byte at a time is searched once, not once per byte
            return .needMore
        }
        guard lineEnd > headStart, bytes[lineEnd - 1] == cr else { throw .malformedRequestLine }
        lineScanned = lineEnd

        // The blank line ending the head, looking only at bytes not seen before. Every LF
        // must follow a CR and every CR precede an LF (no bare CR or LF, RFC 9112 §2.2).
        // The head ends within `maxHeaderBytes + 2` bytes after the request line; as above,
        // nothing past that is looked at, and a buffer that reaches it without the blank line
        // is refused at once: the head cannot end in time, and waiting could stall the connection.
        let maxHead = lineEnd + 1 + limits.maxHeaderBytes + 2
        let scanEnd = min(bytes.count, maxHead)
        var index = max(lineEnd + 1, scanned)
        var headEnd: Int?
        while index < scanEnd {
            // Whole words past those that cannot matter here (no byte under 0x0E, so neither
            // CR nor LF): a long field, a user's token, is most of a head.
            index = bytes.skippingWords(withNoByteBelow: 0x0E, from: index, to: scanEnd)
            guard index < scanEnd else { break }
            let byte = bytes[index]
            if byte == lf {
                guard bytes[index - 1] == cr else { throw .malformedHeader }
                if bytes[index - 2] == lf {
                    headEnd = index + 1
                    break
                }  // …CRLF CRLF
            } else if byte == cr, index + 1 < scanEnd, bytes[index + 1] != lf {
                throw .malformedHeader
            }
            index += 1
        }
        guard let headEnd else {
            if bytes.count >= maxHead { throw .headerTooLarge }
            scanned = max(lineEnd + 1, bytes.count - 1)  // a CR at the end is checked again with its successor
            return .needMore
        }
        lineScanned = 0
        scanned = 0

        // The request is built once, from its parts, at the end: one changed in place across
        // calls that may throw is copied once more on its way out (a retain per string).
        let line = try parseRequestLine(bytes.extracting(headStart..<(lineEnd - 1)))
        let headers = try parseFields(bytes.extracting((lineEnd + 1)..<(headEnd - 2)))
        let framing = try framing(headers, version: line.version)
        let request = HTTPRequest(
            method: line.method, target: line.target, path: line.path, query: line.query, version: line.version,
            headers: headers)
        let parsed = ParsedHead(
            request: request, body: framing.body, keepAlive: framing.keepAlive, expectsContinue: framing.expectsContinue
        )
        return .complete(parsed, consumed: headEnd)
    }

    private func firstLineFeed(_ bytes: Span<UInt8>, from start: Int, end: Int) -> Int? {
        bytes.firstIndex(of: lf, from: start, to: end)
    }

    /// `method SP request-target SP HTTP-version` with single spaces (RFC 9112 §3).
    private func parseRequestLine(
        _ line: Span<UInt8>
    ) throws(HTTPParseError) -> (
        method: String, target: String, path: String, query: RequestQuery, version: HTTPVersion
    ) {
        if ASCIIBytes.startsWith(line, "PRI * HTTP/2.0") { throw .http2Preface }
        guard let firstSpace = line.firstIndex(of: space) else { throw .malformedRequestLine }
        guard let lastSpace = line.lastIndex(of: space), lastSpace > firstSpace + 1 else { throw .malformedRequestLine }
        let method = line.extracting(..<firstSpace)
        let target = line.extracting((firstSpace + 1)..<lastSpace)
        let versionBytes = line.extracting((lastSpace + 1)...)
        guard !method.isEmpty, method.allSatisfy(ASCIIBytes.isToken) else { throw .malformedRequestLine }
        guard target.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { throw .invalidTarget }

        // `HTTP/d.d`, byte by byte (every request passes here: a literal's `utf8` view is
        // compared through its iterator); only 1.1 and 1.0 are served.
        guard versionBytes.count == 8, versionBytes[0] == UInt8(ascii: "H"), versionBytes[1] == UInt8(ascii: "T"),
            versionBytes[2] == UInt8(ascii: "T"), versionBytes[3] == UInt8(ascii: "P"),
            versionBytes[4] == UInt8(ascii: "/"), isDigit(versionBytes[5]), versionBytes[6] == UInt8(ascii: "."),
            isDigit(versionBytes[7])
        else { throw .malformedRequestLine }
        let version: HTTPVersion
        switch (versionBytes[5], versionBytes[7]) {
        case (UInt8(ascii: "1"), UInt8(ascii: "1")): version = .http1_1
        case (UInt8(ascii: "1"), UInt8(ascii: "0")): version = .http1_0
        default: throw .unsupportedVersion
        }

        let targetText = target.decodedString()
        let (path, query) = try RequestTarget.parse(targetText)
        return (methodName(method), targetText, path, query, version)
    }

    /// `field-name ":" OWS field-value OWS CRLF`, strictly (RFC 9112 §5, RFC 9110 §5.5).
    private func parseFields(_ block: Span<UInt8>) throws(HTTPParseError) -> HTTPHeaders {
        var fields: [(name: String, value: String)] = []
        var count = 0
        var lineStart = 0
        // Each line is read once: the name up to its colon, the value up to the CR. The head's
        // scan already refused a CR or LF that is not part of a CRLF, so the first CR ends the line.
        while lineStart < block.count {
            let first = block[lineStart]
            if first == space || first == tab { throw .obsoleteLineFolding }
            var index = lineStart
            // The name's bytes, all tokens: so also no space before the colon.
            while index < block.count, ASCIIBytes.isToken(block[index]) { index += 1 }
            guard index > lineStart, index < block.count, block[index] == colon else { throw .malformedHeader }
            let name = block.extracting(lineStart..<index)
            index += 1
            while index < block.count, block[index] == space || block[index] == tab { index += 1 }
            let valueStart = index
            while true {
                // Whole words while all are printable ASCII (no CR): a long value, a user's
                // token, is most of such a head.
                index = block.skippingWords(ofPrintableASCIIFrom: index, to: block.count)
                guard index < block.count, block[index] != cr else { break }
                let byte = block[index]
                guard byte == tab || (byte >= 0x20 && byte != 0x7F) else { throw .malformedHeader }
                index += 1
            }
            guard index + 1 < block.count, block[index + 1] == lf else { throw .malformedHeader }
            var valueEnd = index
            while valueEnd > valueStart, block[valueEnd - 1] == space || block[valueEnd - 1] == tab { valueEnd -= 1 }
            let value = block.extracting(valueStart..<valueEnd)
            lineStart = index + 2
            count += 1
            if count > limits.maxHeaderCount { throw .tooManyHeaders }
            if fields.isEmpty { fields.reserveCapacity(8) }
            fields.append((fieldName(name), value.decodedString()))
        }
        return HTTPHeaders(fields)
    }

    /// Message framing and connection handling (RFC 9112 §6, §9.3; RFC 9110 §10.1.1).
    private func framing(
        _ headers: HTTPHeaders, version: HTTPVersion
    ) throws(HTTPParseError) -> (body: BodyFraming, keepAlive: Bool, expectsContinue: Bool) {
        var body = BodyFraming.length(0)
        var expectsContinue = false
        // One pass finds which of the framing fields are there; their values are gathered
        // only when they are (a GET carries none of them but `Host`).
        var hosts = 0
        var present = FramingFields()
        for index in headers.fields.indices {
            let name = headers.fields[index].name
            switch name.utf8.count {
            case 4: if name.caseInsensitiveEquals("Host") { hosts += 1 }
            case 6: if name.caseInsensitiveEquals("Expect") { present.insert(.expect) }
            case 10: if name.caseInsensitiveEquals("Connection") { present.insert(.connection) }
            case 14: if name.caseInsensitiveEquals("Content-Length") { present.insert(.contentLength) }
            case 17: if name.caseInsensitiveEquals("Transfer-Encoding") { present.insert(.transferEncoding) }
            default: break
            }
        }
        if version == .http1_1, hosts != 1 { throw .missingHost }
        if present.isDisjoint(with: [.transferEncoding, .contentLength, .expect, .connection]) {
            return (body, version == .http1_1, false)
        }
        let transferEncodings = present.contains(.transferEncoding) ? headers.values("Transfer-Encoding") : []
        let lengths = present.contains(.contentLength) ? headers.values("Content-Length") : []
        if !transferEncodings.isEmpty {
            // Both framings at once is the classic smuggling vector (RFC 9112 §6.3 ¶3), and an
            // HTTP/1.0 message with Transfer-Encoding has faulty framing (§6.1): refuse and close.
            guard lengths.isEmpty else { throw .conflictingFraming }
            guard version == .http1_1 else { throw .transferEncodingOnHTTP10 }
            body = try Self.transferFraming(transferEncodings)
        } else if !lengths.isEmpty {
            // Repeated or listed values are accepted only when all are the same number (RFC 9110 §8.6).
            var length: Int?
            for field in lengths {
                for item in field.split(separator: ",", omittingEmptySubsequences: false) {
                    let text = item.trimmingSpaces()
                    guard (1...18).contains(text.utf8.count), text.utf8.allSatisfy(isDigit), let value = Int(text)
                    else {
                        throw .invalidContentLength
                    }
                    if let length, length != value { throw .invalidContentLength }
                    length = value
                }
            }
            body = .length(length ?? 0)
            if (length ?? 0) > limits.maxBodyBytes { throw .bodyTooLarge }
        }
        if let expectation = headers["Expect"] {
            guard expectation.caseInsensitiveEquals("100-continue") else { throw .unsupportedExpectation }
            expectsContinue = body != .length(0)
        }
        switch version {
        case .http1_1: return (body, !headers.containsToken("close", in: "Connection"), expectsContinue)
        case .http1_0: return (body, headers.containsToken("keep-alive", in: "Connection"), expectsContinue)
        }
    }
}

/// Which of the fields that decide framing and connection handling a head carries.
private struct FramingFields: OptionSet {
    let rawValue: UInt8
    static let transferEncoding = FramingFields(rawValue: 1)
    static let contentLength = FramingFields(rawValue: 2)
    static let expect = FramingFields(rawValue: 4)
    static let connection = FramingFields(rawValue: 8)
}

extension RequestHeadParser {
    /// The framing `Transfer-Encoding` fields give (RFC 9112 §6.1): only exactly `chunked` is
    /// read. `chunked` repeated, not last, or beside an empty or malformed element makes the
    /// body's end ambiguous (400, close); other codings are not implemented (501, close).
    static func transferFraming(_ fields: [String]) throws(HTTPParseError) -> BodyFraming {
        var codings: [Substring] = []
        for field in fields {
            for item in field.split(separator: ",", omittingEmptySubsequences: false) {
                let coding = item.trimmingSpaces()
                guard !coding.isEmpty, coding.utf8.allSatisfy(ASCIIBytes.isToken) else {
                    throw .invalidTransferEncoding
                }
                codings.append(coding)
            }
        }
        let chunked = codings.indices.filter { codings[$0].caseInsensitiveEquals("chunked") }
        if chunked.count > 1 || (chunked.count == 1 && chunked[0] != codings.count - 1) {
            throw .invalidTransferEncoding
        }
        guard codings.count == 1, chunked.count == 1 else { throw .transferEncoding }
        return .chunked
    }
}

/// The method as a string: the usual ones are literals, not built from the bytes.
private func methodName(_ bytes: Span<UInt8>) -> String {
    if ASCIIBytes.equals(bytes, "GET") { return "GET" }
    if ASCIIBytes.equals(bytes, "HEAD") { return "HEAD" }
    return bytes.decodedString()
}

/// A field's name as a string: the names clients send on every request, spelled as they
/// send them (`Host`, `accept-encoding`), are literals, not built and validated from the
/// bytes; any other name is made from its bytes. Either way the string is the bytes as sent.
private func fieldName(_ bytes: Span<UInt8>) -> String {
    switch bytes.count {
    case 4:
        if ASCIIBytes.equals(bytes, "Host") { return "Host" }
        if ASCIIBytes.equals(bytes, "host") { return "host" }
    case 6:
        if ASCIIBytes.equals(bytes, "Accept") { return "Accept" }
        if ASCIIBytes.equals(bytes, "accept") { return "accept" }
        if ASCIIBytes.equals(bytes, "Origin") { return "Origin" }
        if ASCIIBytes.equals(bytes, "origin") { return "origin" }
    case 10:
        if ASCIIBytes.equals(bytes, "User-Agent") { return "User-Agent" }
        if ASCIIBytes.equals(bytes, "user-agent") { return "user-agent" }
        if ASCIIBytes.equals(bytes, "Connection") { return "Connection" }
        if ASCIIBytes.equals(bytes, "connection") { return "connection" }
    case 13:
        if ASCIIBytes.equals(bytes, "If-None-Match") { return "If-None-Match" }
        if ASCIIBytes.equals(bytes, "if-none-match") { return "if-none-match" }
        if ASCIIBytes.equals(bytes, "Authorization") { return "Authorization" }
        if ASCIIBytes.equals(bytes, "authorization") { return "authorization" }
    case 15:
        if ASCIIBytes.equals(bytes, "Accept-Encoding") { return "Accept-Encoding" }
        if ASCIIBytes.equals(bytes, "accept-encoding") { return "accept-encoding" }
        if ASCIIBytes.equals(bytes, "Accept-Language") { return "Accept-Language" }
        if ASCIIBytes.equals(bytes, "accept-language") { return "accept-language" }
    default: break
    }
    return bytes.decodedString()
}

private let cr = UInt8(ascii: "\r")
private let lf = UInt8(ascii: "\n")
private let space = UInt8(ascii: " ")
private let tab = UInt8(ascii: "\t")
private let colon = UInt8(ascii: ":")

private func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
