import Testing

@testable import AmodbHTTP

/// What parsing a fixture should give.
enum ParseExpectation: Sendable, CustomStringConvertible {
    case request(method: String, path: String, query: [String], keepAlive: Bool = true, bodyLength: Int = 0)
    case error(Int)

    var description: String {
        switch self {
        case .request(let method, let path, _, _, _): "\(method) \(path)"
        case .error(let status): "error \(status)"
        }
    }
}

struct ParserFixture: Sendable, CustomTestStringConvertible {
    let name: String
    let bytes: [UInt8]
    let expected: ParseExpectation

    init(_ name: String, _ text: String, _ expected: ParseExpectation) {
        self.name = name
        self.bytes = Array(text.utf8)
        self.expected = expected
    }

    var testDescription: String { name }
}

/// Feeds `bytes` whole (`chunk == nil`) or in chunks of that size, like a socket would.
private func parse(_ bytes: [UInt8], chunk: Int?, limits: HTTPLimits = HTTPLimits()) -> Result<
    ParsedHead, HTTPParseError
>? {
    var parser = RequestHeadParser(limits: limits)
    var buffer: [UInt8] = []
    var offset = 0
    let step = chunk ?? bytes.count
    while offset < bytes.count {
        buffer.append(contentsOf: bytes[offset..<min(bytes.count, offset + step)])
        offset += step
        do {
            if case .complete(let head, _) = try parser.parse(buffer, from: 0) { return .success(head) }
        } catch {
            return .failure(error)
        }
    }
    return nil
}

struct RequestHeadParserTests {
    static let fixtures: [ParserFixture] = [
        ParserFixture(
            "simple GET", "GET /3/movie/550 HTTP/1.1\r\nHost: a\r\n\r\n",
            .request(method: "GET", path: "/3/movie/550", query: [])),
        ParserFixture(
            "query decoded", "GET /x?language=de-DE&a=%20b+c HTTP/1.1\r\nHost: a\r\n\r\n",
            .request(method: "GET", path: "/x", query: ["language=de-DE", "a= b c"])),
        ParserFixture(
            "leading empty line ignored", "\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n",
            .request(method: "GET", path: "/", query: [])),
        ParserFixture(
            "HTTP/1.0 without Host", "GET / HTTP/1.0\r\n\r\n",
            .request(method: "GET", path: "/", query: [], keepAlive: false)),
        ParserFixture(
            "Connection: close", "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
            .request(method: "GET", path: "/", query: [], keepAlive: false)),
        ParserFixture(
            "absolute-form accepted", "GET http://example.com/3/movie/1?x=1 HTTP/1.1\r\nHost: a\r\n\r\n",
            .request(method: "GET", path: "/3/movie/1", query: ["x=1"])),
        ParserFixture(
            "small body counted", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello",
            .request(method: "GET", path: "/", query: [], bodyLength: 5)),
        ParserFixture(
            "same Content-Length twice",
            "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nab",
            .request(method: "GET", path: "/", query: [], bodyLength: 2)),
        ParserFixture(
            "percent-encoded letters decoded once", "GET /3/movie/%35%35%30 HTTP/1.1\r\nHost: a\r\n\r\n",
            .request(method: "GET", path: "/3/movie/550", query: [])),
        ParserFixture(
            "other method parsed", "DELETE /x HTTP/1.1\r\nHost: a\r\n\r\n",
            .request(method: "DELETE", path: "/x", query: [])),

        ParserFixture("missing Host", "GET / HTTP/1.1\r\n\r\n", .error(400)),
        ParserFixture("two Hosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", .error(400)),
        ParserFixture(
            "Content-Length and Transfer-Encoding",
            "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", .error(400)),
        ParserFixture(
            "Transfer-Encoding other than chunked", "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n",
            .error(501)),
        ParserFixture(
            "conflicting Content-Length", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
            .error(400)),
        ParserFixture(
            "Content-Length list that disagrees", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 3, 4\r\n\r\n",
            .error(400)),
        ParserFixture(
            "negative Content-Length", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", .error(400)),
        ParserFixture(
            "non-numeric Content-Length", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1e3\r\n\r\n", .error(400)),
        ParserFixture(
            "huge Content-Length", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999999\r\n\r\n",
            .error(400)),
        ParserFixture("body over the cap", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 100000\r\n\r\n", .error(413)),
        ParserFixture("obsolete line folding", "GET / HTTP/1.1\r\nHost: a\r\nX-A: b\r\n c\r\n\r\n", .error(400)),
        ParserFixture("space before colon", "GET / HTTP/1.1\r\nHost : a\r\n\r\n", .error(400)),
        ParserFixture("empty header name", "GET / HTTP/1.1\r\nHost: a\r\n: b\r\n\r\n", .error(400)),
        ParserFixture("invalid header name", "GET / HTTP/1.1\r\nHost: a\r\nX(A): b\r\n\r\n", .error(400)),
        ParserFixture("NUL in header value", "GET / HTTP/1.1\r\nHost: a\r\nX-A: b\u{0}c\r\n\r\n", .error(400)),
        ParserFixture(
            "control character in header value", "GET / HTTP/1.1\r\nHost: a\r\nX-A: b\u{7}c\r\n\r\n", .error(400)),
        ParserFixture("bare CR in header", "GET / HTTP/1.1\r\nHost: a\rX-A: b\r\n\r\n", .error(400)),
        ParserFixture("bare LF line end", "GET / HTTP/1.1\r\nHost: a\nX-A: b\r\n\r\n", .error(400)),
        ParserFixture("bare LF request line", "GET / HTTP/1.1\nHost: a\r\n\r\n", .error(400)),
        ParserFixture("header without colon", "GET / HTTP/1.1\r\nHost: a\r\nnonsense\r\n\r\n", .error(400)),
        ParserFixture("HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", .error(505)),
        ParserFixture("HTTP/2.0 version", "GET / HTTP/2.0\r\nHost: a\r\n\r\n", .error(505)),
        ParserFixture("garbage version", "GET / HTTX/1.1\r\nHost: a\r\n\r\n", .error(400)),
        ParserFixture("lower-case version", "GET / http/1.1\r\nHost: a\r\n\r\n", .error(400)),
        ParserFixture("two spaces in request line", "GET  / HTTP/1.1\r\nHost: a\r\n\r\n", .error(400)),
        ParserFixture("missing target", "GET HTTP/1.1\r\nHost: a\r\n\r\n", .error(400)),
        ParserFixture("asterisk target", "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", .error(400)),
        ParserFixture("authority-form target", "CONNECT example.com:443 HTTP/1.1\r\nHost: a\r\n\r\n", .error(400)),
        ParserFixture("encoded slash", "GET /3/movie%2F550 HTTP/1.1\r\nHost: a\r\n\r\n", .error(400)),
        ParserFixture("encoded backslash", "GET /3/movie%5c550 HTTP/1.1\r\nHost: a\r\n\r\n", .error(400)),
        ParserFixture("backslash", "GET /3\\movie HTTP/1.1\r\nHost: a\r\n\r\n", .error(400)),
        ParserFixture("dot-dot segment", "GET /3/../etc/passwd HTTP/1.1\r\nHost: a\r\n\r\n", .error(400)),
        ParserFixture("encoded dot-dot segment", "GET /3/%2e%2e/movie/550 HTTP/1.1\r\nHost: a\r\n\r\n", .error(400)),
        ParserFixture("dot segment", "GET /3/./movie/550 HTTP/1.1\r\nHost: a\r\n\r\n", .error(400)),
        ParserFixture("empty segment", "GET /3//movie/550 HTTP/1.1\r\nHost: a\r\n\r\n", .error(400)),
        ParserFixture("trailing slash", "GET /3/movie/550/ HTTP/1.1\r\nHost: a\r\n\r\n", .error(400)),
        ParserFixture("encoded NUL in path", "GET /3/movie/550%00 HTTP/1.1\r\nHost: a\r\n\r\n", .error(400)),
        ParserFixture(
            "encoded NUL in query", "GET /3/movie/550?language=en%00 HTTP/1.1\r\nHost: a\r\n\r\n", .error(400)),
        ParserFixture("bad percent escape", "GET /3/movie/5%G0 HTTP/1.1\r\nHost: a\r\n\r\n", .error(400)),
        ParserFixture("truncated percent escape", "GET /3/movie/5?a=%4 HTTP/1.1\r\nHost: a\r\n\r\n", .error(400)),
        ParserFixture("invalid UTF-8 in path", "GET /3/%FF HTTP/1.1\r\nHost: a\r\n\r\n", .error(400)),
        ParserFixture("fragment in target", "GET /3/movie/550#x HTTP/1.1\r\nHost: a\r\n\r\n", .error(400)),
        ParserFixture("non-ASCII byte in target", "GET /3/é HTTP/1.1\r\nHost: a\r\n\r\n", .error(400)),
        ParserFixture("relative target", "GET 3/movie/550 HTTP/1.1\r\nHost: a\r\n\r\n", .error(400)),
        ParserFixture("unknown expectation", "GET / HTTP/1.1\r\nHost: a\r\nExpect: magic\r\n\r\n", .error(417)),
        ParserFixture("method with a bad character", "G(T / HTTP/1.1\r\nHost: a\r\n\r\n", .error(400)),
        // Found by the fuzzer: a combining mark after "/" must not hide a "..", "." or empty segment.
        ParserFixture("combining mark after dot-dot", "GET /a/../%CC%81b HTTP/1.1\r\nHost: a\r\n\r\n", .error(400)),
        ParserFixture("combining mark after empty segment", "GET /x//%cc%81 HTTP/1.1\r\nHost: a\r\n\r\n", .error(400)),
    ]

    @Test(arguments: fixtures)
    func parsesWholeAndByteByByteAlike(_ fixture: ParserFixture) throws {
        for chunk in [nil, 1, 7] as [Int?] {
            let result = try #require(
                parse(fixture.bytes, chunk: chunk), "no complete head (chunk \(String(describing: chunk)))")
            switch (fixture.expected, result) {
            case (.request(let method, let path, let query, let keepAlive, let bodyLength), .success(let head)):
                #expect(head.request.method == method)
                #expect(head.request.path == path)
                #expect(head.request.query.items.map { "\($0.name)=\($0.value)" } == query)
                #expect(head.keepAlive == keepAlive)
                #expect(head.body == .length(bodyLength))
            case (.error(let status), .failure(let error)):
                #expect(error.status == status, "\(error)")
            default:
                Issue.record("expected \(fixture.expected), got \(result) (chunk \(String(describing: chunk)))")
            }
        }
    }

    @Test func rejectsARequestLineLongerThanTheLimit() {
        let long = "GET /" + String(repeating: "a", count: 9000) + " HTTP/1.1\r\nHost: a\r\n\r\n"
        for chunk in [nil, 512] as [Int?] {
            guard case .failure(let error) = parse(Array(long.utf8), chunk: chunk) else {
                Issue.record("no error")
                return
            }
            #expect(error.status == 414)
        }
    }

    @Test func rejectsAnOverlongRequestLineBeforeItEnds() {
        // No line end at all: the limit must trip without waiting for one.
        var parser = RequestHeadParser(limits: HTTPLimits())
        let bytes = Array(("GET /" + String(repeating: "a", count: 9000)).utf8)
        #expect(throws: HTTPParseError.requestLineTooLong) { try parser.parse(bytes, from: 0) }
    }

    @Test func rejectsAHeaderBlockLargerThanTheLimit() {
        var text = "GET / HTTP/1.1\r\nHost: a\r\n"
        for index in 0..<40 { text += "X-Filler-\(index): " + String(repeating: "v", count: 500) + "\r\n" }
        guard case .failure(let error) = parse(Array((text + "\r\n").utf8), chunk: 1000) else {
            Issue.record("no error")
            return
        }
        #expect(error.status == 431)
    }

    @Test func rejectsAnEndlessHeaderBlockBeforeItEnds() {
        var parser = RequestHeadParser(limits: HTTPLimits())
        var text = "GET / HTTP/1.1\r\nHost: a\r\n"
        for index in 0..<40 { text += "X-Filler-\(index): " + String(repeating: "v", count: 500) + "\r\n" }
        #expect(throws: HTTPParseError.headerTooLarge) { try parser.parse(Array(text.utf8), from: 0) }
    }

    @Test func rejectsMoreHeaderFieldsThanTheLimit() {
        var text = "GET / HTTP/1.1\r\nHost: a\r\n"
        for index in 0..<101 { text += "X-\(index): v\r\n" }
        guard case .failure(let error) = parse(Array((text + "\r\n").utf8), chunk: nil) else {
            Issue.record("no error")
            return
        }
        #expect(error.status == 431)
    }

    @Test func reportsHowManyBytesTheHeadTookSoPipelinedRequestsFollow() throws {
        var parser = RequestHeadParser(limits: HTTPLimits())
        let first = "GET /a HTTP/1.1\r\nHost: a\r\n\r\n"
        let bytes = Array((first + "GET /b HTTP/1.1\r\nHost: a\r\n\r\n").utf8)
        guard case .complete(let head, let consumed) = try parser.parse(bytes, from: 0) else {
            Issue.record("incomplete")
            return
        }
        #expect(head.request.path == "/a")
        #expect(consumed == first.utf8.count)
        guard case .complete(let second, _) = try parser.parse(bytes, from: consumed) else {
            Issue.record("incomplete")
            return
        }
        #expect(second.request.path == "/b")
    }

    @Test func emptyLinesBeforeTheRequestLineCountAgainstItsLimit() {
        var limits = HTTPLimits()
        limits.maxRequestLineBytes = 64
        let line = "GET /" + String(repeating: "a", count: 50) + " HTTP/1.1"  // 64 bytes
        for chunk in [nil, 1] as [Int?] {
            guard
                case .failure(let error) = parse(
                    Array(("\r\n" + line + "\r\nHost: a\r\n\r\n").utf8), chunk: chunk, limits: limits)
            else {
                Issue.record("no error")
                return
            }
            #expect(error.status == 414)
        }
    }

    @Test func aHeaderBlockThatFillsTheLimitIsRefusedBeforeItEnds() {
        var limits = HTTPLimits()
        limits.maxHeaderBytes = 256
        var parser = RequestHeadParser(limits: limits)
        var text = "GET / HTTP/1.1\r\nHost: a\r\n"
        while text.utf8.count < 16 + 256 + 2 { text += "X: " + String(repeating: "v", count: 20) + "\r\n" }
        #expect(throws: HTTPParseError.headerTooLarge) { try parser.parse(Array(text.utf8), from: 0) }
    }

    /// Heads on one connection reuse the previous head's field strings where they repeat:
    /// every head must still get exactly its own fields, whether the previous request is
    /// still held (its fields must not change) or gone, and whatever changes between heads
    /// (a value, a name, fewer fields, more fields, another method).
    @Test func eachHeadOnAConnectionGetsExactlyItsOwnFields() throws {
        let heads: [(method: String, fields: [(String, String)])] = [
            (
                "GET",
                [("Host", "a"), ("Accept-Encoding", "gzip, deflate, br"), ("User-Agent", "App/1.0 CFNetwork/1496")]
            ),
            (
                "GET",
                [("Host", "a"), ("Accept-Encoding", "gzip, deflate, br"), ("User-Agent", "App/1.0 CFNetwork/1496")]
            ),
            ("HEAD", [("Host", "a"), ("Accept-Encoding", "br"), ("User-Agent", "App/1.0 CFNetwork/1496")]),
            ("GET", [("Host", "a"), ("accept-encoding", "br")]),
            ("GET", [("Host", "a"), ("accept-encoding", "br"), ("If-None-Match", #""v1-br""#), ("X-Extra", "1")]),
            ("DELETE", [("Host", "b")]),
            ("GET", [("Host", "b"), ("X-Extra", "1"), ("If-None-Match", #""v1-br""#)]),
        ]
        for keepsEarlierRequests in [true, false] {
            var parser = RequestHeadParser(limits: HTTPLimits())
            var held: [(HTTPRequest, [(String, String)])] = []
            for head in heads {
                let text =
                    "\(head.method) /p HTTP/1.1\r\n" + head.fields.map { "\($0.0): \($0.1)\r\n" }.joined() + "\r\n"
                guard case .complete(let parsed, _) = try parser.parse(Array(text.utf8), from: 0) else {
                    Issue.record("incomplete: \(text)")
                    return
                }
                #expect(parsed.request.method == head.method)
                #expect(parsed.request.headers == HTTPHeaders(head.fields.map { (name: $0.0, value: $0.1) }))
                if keepsEarlierRequests { held.append((parsed.request, head.fields)) }
            }
            for (request, fields) in held {
                #expect(request.headers == HTTPHeaders(fields.map { (name: $0.0, value: $0.1) }))
            }
        }
    }
    /// The names clients send on every request come out as literals, the rest from their
    /// bytes: either way a field's name is exactly the bytes sent, in any spelling.
    @Test func fieldNamesAreExactlyAsSentInAnySpelling() throws {
        let names = [
            "Host", "host", "HOST", "hosT", "Accept", "accept", "ACCEPT", "Origin", "origin", "Origim", "User-Agent",
            "user-agent", "User-agent", "Connection", "connection", "If-None-Match", "if-none-match", "IF-NONE-MATCH",
            "Authorization", "authorization", "Authorisation", "Accept-Encoding", "accept-encoding", "Accept-encoding",
            "Accept-Language", "accept-language", "Accept-Languagf", "X-Hos", "X-Extra",
        ]
        for name in names {
            let text = "GET /p HTTP/1.1\r\n" + (name.lowercased() == "host" ? "" : "Host: a\r\n") + "\(name): v\r\n\r\n"
            var parser = RequestHeadParser(limits: HTTPLimits())
            guard case .complete(let parsed, _) = try parser.parse(Array(text.utf8), from: 0) else {
                Issue.record("incomplete: \(text)")
                continue
            }
            #expect(parsed.request.headers.fields.last?.name == name)
            #expect(parsed.request.headers.fields.last.map { Array($0.name.utf8) } == Array(name.utf8))
        }
    }

    /// A target that repeats the previous head's reuses its strings: every head must still get
    /// exactly its own target, path and query, with one refused in between, and the earlier
    /// requests must keep theirs.
    @Test func eachHeadOnAConnectionGetsExactlyItsOwnTarget() throws {
        let targets: [(target: String, path: String?, query: [String])] = [
            ("/3/movie/550?language=fr-FR", "/3/movie/550", ["language=fr-FR"]),
            ("/3/movie/550?language=fr-FR", "/3/movie/550", ["language=fr-FR"]),
            ("/3/trending/movie/week", "/3/trending/movie/week", []),
            ("/3/movie/%zz", nil, []),
            ("/3/trending/movie/week", "/3/trending/movie/week", []),
            ("/3/movie/551?language=fr-FR", "/3/movie/551", ["language=fr-FR"]),
            ("/3/movie/550?language=fr-FR&page=2", "/3/movie/550", ["language=fr-FR", "page=2"]),
        ]
        var parser = RequestHeadParser(limits: HTTPLimits())
        var held: [(request: HTTPRequest, target: String)] = []
        for expected in targets {
            let text = "GET \(expected.target) HTTP/1.1\r\nHost: a\r\n\r\n"
            guard let path = expected.path else {
                #expect(throws: HTTPParseError.self) { try parser.parse(Array(text.utf8), from: 0) }
                continue
            }
            guard case .complete(let parsed, _) = try parser.parse(Array(text.utf8), from: 0) else {
                Issue.record("incomplete: \(text)")
                return
            }
            #expect(parsed.request.target == expected.target)
            #expect(parsed.request.path == path)
            #expect(parsed.request.query.items.map { "\($0.name)=\($0.value)" } == expected.query)
            held.append((parsed.request, expected.target))
        }
        #expect(held.count == targets.count - 1)
        for (request, target) in held {
            #expect(request.target == target)
        }
    }

    /// Heads in a row on one connection are each read from their own bytes: nothing of one
    /// head is carried into the next, whatever they share.
    @Test func headsInARowAreEachReadFromTheirOwnBytes() throws {
        let get = "GET /3/movie/550?language=fr-FR HTTP/1.1\r\nHost: a\r\nAccept-Encoding: gzip, deflate, br\r\n\r\n"
        let other = "GET /3/movie/551?language=de HTTP/1.1\r\nHost: b\r\n\r\n"
        let http10 = get.replacingOccurrences(of: "HTTP/1.1", with: "HTTP/1.0")
        func parse(_ parser: inout RequestHeadParser, _ text: String) throws -> (
            HTTPRequest, consumed: Int, keepAlive: Bool
        )? {
            guard case .complete(let head, let consumed) = try parser.parse(Array(text.utf8), from: 0) else {
                return nil
            }
            return (head.request, consumed, head.keepAlive)
        }
        var parser = RequestHeadParser(limits: HTTPLimits())
        for (text, path, language, host, encoding, keepAlive) in [
            (get, "/3/movie/550", "fr-FR", "a", "gzip, deflate, br", true),
            // a pipelined request follows
            (get + "GET /next", "/3/movie/550", "fr-FR", "a", "gzip, deflate, br", true),
            (other, "/3/movie/551", "de", "b", nil, true),
            (get, "/3/movie/550", "fr-FR", "a", "gzip, deflate, br", true),
            (http10, "/3/movie/550", "fr-FR", "a", "gzip, deflate, br", false),
        ] {
            let parsed = try #require(try parse(&parser, text))
            #expect(parsed.0.path == path)
            #expect(parsed.0.queryValue("language") == language)
            #expect(parsed.0.headers["Host"] == host)
            #expect(parsed.0.headers["Accept-Encoding"] == encoding)
            #expect(parsed.0.headers.fields.count == (encoding == nil ? 1 : 2))
            #expect(parsed.consumed == text.utf8.count - (text.hasSuffix("GET /next") ? 9 : 0))
            #expect(parsed.keepAlive == keepAlive)
        }
        // A head that starts like the previous one but breaks the rules is refused.
        var strict = RequestHeadParser(limits: HTTPLimits())
        _ = try parse(&strict, get)
        #expect(throws: HTTPParseError.self) {
            try strict.parse(Array((String(get.utf8.dropLast(2))! + "Bad Field\r\n\r\n").utf8), from: 0)
        }
    }
}
