import Testing

@testable import AmodbHTTP

/// One stream of bytes on a connection and what the decoder must make of it.
struct DecoderFixture: Sendable, CustomTestStringConvertible {
    /// How the stream ends.
    enum Ending: Sendable, Equatable {
        /// Every byte was used by whole requests.
        case allUsed
        /// The last request's body has not ended yet.
        case inBody
        /// Refused with this status (the connection is answered and closed).
        case error(Int)
    }

    let name: String
    let bytes: [UInt8]
    /// Paths of the whole requests, in order.
    let requests: [String]
    let ending: Ending

    init(_ name: String, _ text: String, requests: [String], _ ending: Ending) {
        self.name = name
        self.bytes = Array(text.utf8)
        self.requests = requests
        self.ending = ending
    }

    var testDescription: String { name }
}

private let head = "GET /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
private let next = "GET /next HTTP/1.1\r\nHost: x\r\n\r\n"

/// Feeds `bytes` to a decoder in pieces of `chunk` bytes (nil: whole), as a connection would:
/// decoding after every piece until it needs more. Returns the requests and how it ended.
private func decode(_ bytes: [UInt8], chunk: Int?, limits: HTTPLimits = HTTPLimits()) -> (
    paths: [String], ending: DecoderFixture.Ending
) {
    var decoder = RequestDecoder(limits: limits)
    var buffer: [UInt8] = []
    var readIndex = 0
    var paths: [String] = []
    let step = chunk ?? max(1, bytes.count)
    var offset = 0
    while offset < bytes.count {
        buffer.append(contentsOf: bytes[offset..<min(bytes.count, offset + step)])
        offset += step
        while readIndex < buffer.count {
            do {
                let (event, consumed) = try decoder.decode(buffer, from: readIndex)
                readIndex += consumed
                if case .request(let head) = event { paths.append(head.request.path) }
                if case .needMore = event, consumed == 0 { break }
            } catch {
                return (paths, .error(error.status))
            }
        }
    }
    return (paths, decoder.phase == .body ? .inBody : .allUsed)
}

struct RequestDecoderTests {
    static let fixtures: [DecoderFixture] = [
        DecoderFixture("no body", "GET /a HTTP/1.1\r\nHost: x\r\n\r\n" + next, requests: ["/a", "/next"], .allUsed),
        DecoderFixture(
            "Content-Length body skipped, not parsed",
            "GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nGET " + next, requests: ["/a", "/next"], .allUsed),
        DecoderFixture(
            "Content-Length body not yet complete", "GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: 9\r\n\r\nabc",
            requests: [], .inBody),
        DecoderFixture(
            "chunked body then a pipelined request", head + "5\r\nhello\r\n0\r\n\r\n" + next,
            requests: ["/a", "/next"], .allUsed),
        DecoderFixture("only the last chunk", head + "0\r\n\r\n", requests: ["/a"], .allUsed),
        DecoderFixture(
            "several chunks, upper and lower hex", head + "a\r\n0123456789\r\nB\r\n0123456789a\r\n0\r\n\r\n",
            requests: ["/a"], .allUsed),
        DecoderFixture("leading zeros in sizes", head + "0005\r\nhello\r\n000\r\n\r\n", requests: ["/a"], .allUsed),
        DecoderFixture(
            "chunk extensions ignored", head + "5;name=value;flag\r\nhello\r\n0;last\r\n\r\n", requests: ["/a"],
            .allUsed),
        DecoderFixture(
            "chunk extension with a quoted string", head + "5;n=\"a b\"\r\nhello\r\n0\r\n\r\n", requests: ["/a"],
            .allUsed),
        DecoderFixture(
            "trailer fields read and dropped",
            head + "5\r\nhello\r\n0\r\nX-Checksum: abc\r\nX-Other:\tv\r\n\r\n" + next, requests: ["/a", "/next"],
            .allUsed),
        DecoderFixture(
            "a body that is a request is not parsed as one",
            head + "23\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n\r\n0\r\n\r\n", requests: ["/a"], .allUsed),
        DecoderFixture(
            "chunked with Expect 100-continue",
            "GET /a HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            requests: ["/a"], .allUsed),
        DecoderFixture(
            "chunked, in odd case", "GET /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: ChUnKeD\r\n\r\n0\r\n\r\n",
            requests: ["/a"], .allUsed),
        DecoderFixture("chunked body not yet complete", head + "5\r\nhel", requests: [], .inBody),
        DecoderFixture("chunked body without its final CRLF", head + "0\r\n", requests: [], .inBody),

        // Sizes (RFC 9112 §7.1): 1*HEXDIG, nothing else.
        DecoderFixture("size with 0x", head + "0x5\r\nhello\r\n0\r\n\r\n", requests: [], .error(400)),
        DecoderFixture("size with a sign", head + "+5\r\nhello\r\n0\r\n\r\n", requests: [], .error(400)),
        DecoderFixture("negative size", head + "-1\r\n\r\n", requests: [], .error(400)),
        DecoderFixture("empty size", head + "\r\nhello\r\n0\r\n\r\n", requests: [], .error(400)),
        DecoderFixture("space before the size", head + " 5\r\nhello\r\n0\r\n\r\n", requests: [], .error(400)),
        DecoderFixture("space after the size", head + "5 \r\nhello\r\n0\r\n\r\n", requests: [], .error(400)),
        DecoderFixture("non-hex size", head + "g\r\n", requests: [], .error(400)),
        DecoderFixture("size that overflows 64 bits", head + "10000000000000000\r\n", requests: [], .error(413)),
        DecoderFixture("size of many f", head + String(repeating: "f", count: 40) + "\r\n", requests: [], .error(413)),
        DecoderFixture(
            "chunks adding up past the limit", head + "1000\r\n" + String(repeating: "a", count: 4096) + "\r\n1001\r\n",
            requests: [], .error(413)),

        // Line ends: CRLF only.
        DecoderFixture("bare LF after the size", head + "5\nhello\r\n0\r\n\r\n", requests: [], .error(400)),
        DecoderFixture("bare CR after the size", head + "5\rhello\r\n0\r\n\r\n", requests: [], .error(400)),
        DecoderFixture("data longer than its size", head + "3\r\nhello\r\n0\r\n\r\n", requests: [], .error(400)),
        DecoderFixture("data not followed by CRLF", head + "5\r\nhello0\r\n\r\n", requests: [], .error(400)),
        DecoderFixture("data followed by a bare LF", head + "5\r\nhello\n0\r\n\r\n", requests: [], .error(400)),
        DecoderFixture("bare LF in an extension", head + "5;a\nb\r\nhello\r\n0\r\n\r\n", requests: [], .error(400)),
        DecoderFixture("bare CR in an extension", head + "5;a\rb\r\nhello\r\n0\r\n\r\n", requests: [], .error(400)),
        DecoderFixture("NUL in an extension", head + "5;a\u{0}\r\nhello\r\n0\r\n\r\n", requests: [], .error(400)),
        DecoderFixture(
            "extension line over its limit", head + "5;" + String(repeating: "e", count: 5000) + "\r\n", requests: [],
            .error(400)),
        DecoderFixture("last chunk ending in a bare LF", head + "0\r\n\n", requests: [], .error(400)),

        // Trailers: header fields, strictly.
        DecoderFixture("folded trailer", head + "0\r\nX-A: b\r\n c\r\n\r\n", requests: [], .error(400)),
        DecoderFixture("trailer without a colon", head + "0\r\nnonsense\r\n\r\n", requests: [], .error(400)),
        DecoderFixture("space before a trailer's colon", head + "0\r\nX-A : b\r\n\r\n", requests: [], .error(400)),
        DecoderFixture("bare LF in a trailer", head + "0\r\nX-A: b\nX-B: c\r\n\r\n", requests: [], .error(400)),
        DecoderFixture("control byte in a trailer", head + "0\r\nX-A: b\u{1}\r\n\r\n", requests: [], .error(400)),
        DecoderFixture(
            "trailers over the header byte limit",
            head + "0\r\n" + (0..<40).map { "X-\($0): \(String(repeating: "v", count: 500))\r\n" }.joined() + "\r\n",
            requests: [], .error(431)),
        DecoderFixture(
            "more trailers than the header count limit",
            head + "0\r\n" + (0..<101).map { "X-\($0): v\r\n" }.joined() + "\r\n", requests: [], .error(431)),

        // Ambiguous framing (RFC 9112 §6.1, §6.3): refused, and the connection closed.
        DecoderFixture(
            "Content-Length and chunked",
            "GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            requests: [], .error(400)),
        DecoderFixture(
            "chunked, then Content-Length",
            "GET /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n",
            requests: [], .error(400)),
        DecoderFixture(
            "chunked not last", "GET /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", requests: [],
            .error(400)),
        DecoderFixture(
            "chunked twice in one field", "GET /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, chunked\r\n\r\n",
            requests: [], .error(400)),
        DecoderFixture(
            "chunked in two fields",
            "GET /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
            requests: [], .error(400)),
        DecoderFixture(
            "empty coding in the list", "GET /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: , chunked\r\n\r\n",
            requests: [], .error(400)),
        DecoderFixture(
            "coding with a parameter", "GET /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked;q=1\r\n\r\n",
            requests: [], .error(400)),
        DecoderFixture(
            "empty Transfer-Encoding", "GET /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: \r\n\r\n", requests: [],
            .error(400)),
        DecoderFixture(
            "chunked on HTTP/1.0", "GET /a HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", requests: [],
            .error(400)),
        DecoderFixture(
            "a coding before chunked", "GET /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
            requests: [], .error(501)),
        DecoderFixture(
            "identity", "GET /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity\r\n\r\n", requests: [], .error(501)),
        DecoderFixture(
            "a look-alike of chunked", "GET /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunkedx\r\n\r\n",
            requests: [], .error(501)),
    ]

    @Test(arguments: fixtures)
    func decodesWholeByteByByteAndInPiecesAlike(_ fixture: DecoderFixture) {
        for chunk in [nil, 1, 2, 7] as [Int?] {
            let (paths, ending) = decode(fixture.bytes, chunk: chunk)
            #expect(paths == fixture.requests, "pieces of \(String(describing: chunk))")
            #expect(ending == fixture.ending, "pieces of \(String(describing: chunk))")
        }
    }

    @Test func aChunkedBodyUpToTheLimitIsReadAndOneByteMoreIsRefused() {
        var limits = HTTPLimits()
        limits.maxBodyBytes = 10
        let exact = head + "6\r\nabcdef\r\n4\r\nghij\r\n0\r\n\r\n"
        let over = head + "6\r\nabcdef\r\n5\r\n"
        for chunk in [nil, 1] as [Int?] {
            #expect(decode(Array(exact.utf8), chunk: chunk, limits: limits) == (["/a"], .allUsed))
            #expect(decode(Array(over.utf8), chunk: chunk, limits: limits) == ([], .error(413)))
        }
    }

    @Test func theChunkedParserNeverReadsPastTheBodysEnd() throws {
        var parser = ChunkedBodyParser(limits: HTTPLimits())
        let body = Array("3\r\nabc\r\n0\r\nX: y\r\n\r\n".utf8)
        let consumed = try parser.consume(body + Array(next.utf8), from: 0)
        #expect(consumed == body.count)
        #expect(parser.isComplete)
    }

    @Test func theDecoderTellsWhenABodyFollowsSoItsDeadlineCanStart() throws {
        var decoder = RequestDecoder(limits: HTTPLimits())
        let bytes = Array((head + "5\r\nhe").utf8)
        let (event, consumed) = try decoder.decode(bytes, from: 0)
        guard case .bodyFollows(let parsed) = event else {
            Issue.record("expected bodyFollows, got \(event)")
            return
        }
        #expect(parsed.body == .chunked)
        #expect(decoder.phase == .body)
        let (more, used) = try decoder.decode(bytes, from: consumed)
        guard case .needMore = more else {
            Issue.record("expected needMore, got \(more)")
            return
        }
        #expect(consumed + used == bytes.count)
    }
}

/// A body framed by `Content-Length` is kept with its request, whole however the bytes
/// arrive; a chunked one is read and dropped, and the request says so.
struct RequestBodyTests {
    private static func requests(_ text: String, chunk: Int) throws -> [HTTPRequest] {
        var decoder = RequestDecoder(limits: HTTPLimits())
        let bytes = Array(text.utf8)
        var buffered: [UInt8] = []
        var found: [HTTPRequest] = []
        for start in stride(from: 0, to: bytes.count, by: chunk) {
            buffered += bytes[start..<min(bytes.count, start + chunk)]
            while true {
                let (event, consumed) = try decoder.decode(buffered, from: 0)
                buffered.removeFirst(consumed)
                if case .request(let head) = event { found.append(head.request) }
                if case .needMore = event { break }
            }
        }
        return found
    }

    @Test(arguments: [1, 7, 1_000])
    func aContentLengthBodyIsKeptWholeAndAChunkedOneDropped(chunk: Int) throws {
        let body = #"{"key_id":"a","attestation":"b","challenge":"c"}"#
        let text =
            "POST /attest/keys HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
            + "POST /attest/keys HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
            + "GET /next HTTP/1.1\r\nHost: x\r\n\r\n"
        let found = try Self.requests(text, chunk: chunk)
        #expect(found.count == 3)
        #expect(found[0].body == Array(body.utf8))
        #expect(found[1].body == nil && found[1].bodyWasChunked)
        #expect(found[2].body == nil && !found[2].bodyWasChunked)
    }
}
