import AmodbProxy
import AmodbSandbox
import AmodbTestSupport
import Foundation
import Testing

/// One hostile or broken request and what the proxy must do with it.
struct HostileCase: Sendable, CustomTestStringConvertible {
    enum Afterwards: Sendable { case closed, kept }

    let name: String
    let bytes: [UInt8]
    let status: Int
    let afterwards: Afterwards
    /// Also feed it split in two at every byte (framing cases, where a split could change the meaning).
    let splitEverywhere: Bool

    init(_ name: String, _ text: String, _ status: Int, _ afterwards: Afterwards, splitEverywhere: Bool = false) {
        self.name = name
        self.bytes = Array(text.utf8)
        self.status = status
        self.afterwards = afterwards
        self.splitEverywhere = splitEverywhere
    }

    var testDescription: String { name }
}

private let host = "Host: proxy.test\r\n"

/// Every case is answered without a single request reaching amodb.
let hostileCases: [HostileCase] = [
    // Framing and request smuggling (RFC 9112 §6).
    HostileCase(
        "Content-Length with Transfer-Encoding",
        "GET /healthz HTTP/1.1\r\n\(host)Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400,
        .closed, splitEverywhere: true),
    HostileCase(
        "Transfer-Encoding identity", "GET /healthz HTTP/1.1\r\n\(host)Transfer-Encoding: identity\r\n\r\n", 501,
        .closed),
    HostileCase(
        "Transfer-Encoding gzip", "GET /healthz HTTP/1.1\r\n\(host)Transfer-Encoding: gzip\r\n\r\nabc", 501, .closed),

    // Chunked request bodies (RFC 9112 §7.1): read and dropped, then answered; strict.
    HostileCase(
        "empty chunked body", "GET /healthz HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 200, .kept,
        splitEverywhere: true),
    HostileCase(
        "chunked body with extensions and trailers",
        "GET /healthz HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n0\r\nX-Sum: 1\r\n\r\n",
        200, .kept, splitEverywhere: true),
    HostileCase(
        "chunked in odd case", "GET /healthz HTTP/1.1\r\n\(host)transfer-encoding: CHUNKED\r\n\r\n0\r\n\r\n", 200, .kept
    ),
    HostileCase(
        "chunked body holding a smuggled request is skipped, not parsed",
        "GET /healthz HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\n26\r\nGET /3/movie/550 HTTP/1.1\r\nHost: x\r\n\r\n\r\n0\r\n\r\n",
        200, .kept, splitEverywhere: true),
    HostileCase(
        "chunked with Expect 100-continue",
        "GET /healthz HTTP/1.1\r\n\(host)Expect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
        200, .kept),
    HostileCase(
        "chunk size with 0x",
        "GET /healthz HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\n0x3\r\nabc\r\n0\r\n\r\n", 400, .closed),
    HostileCase(
        "chunk size with a space",
        "GET /healthz HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\n3 \r\nabc\r\n0\r\n\r\n", 400, .closed),
    HostileCase(
        "bare LF after a chunk size",
        "GET /healthz HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\n3\nabc\r\n0\r\n\r\n", 400, .closed,
        splitEverywhere: true),
    HostileCase(
        "chunk longer than its size",
        "GET /healthz HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n", 400, .closed,
        splitEverywhere: true),
    HostileCase(
        "bare CR in a chunk extension",
        "GET /healthz HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\n3;a\rb\r\nabc\r\n0\r\n\r\n", 400, .closed),
    HostileCase(
        "folded trailer", "GET /healthz HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\n0\r\nX-A: b\r\n c\r\n\r\n",
        400, .closed),
    HostileCase(
        "chunk size that overflows",
        "GET /healthz HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\n\(String(repeating: "f", count: 24))\r\n",
        413, .closed),
    HostileCase(
        "chunked body larger than the cap",
        "GET /healthz HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\n1000\r\n\(String(repeating: "a", count: 4096))\r\n1001\r\n",
        413, .closed),
    HostileCase(
        "chunked not last", "GET /healthz HTTP/1.1\r\n\(host)Transfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n", 400,
        .closed),
    HostileCase(
        "chunked twice",
        "GET /healthz HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        400, .closed),
    HostileCase(
        "a coding before chunked", "GET /healthz HTTP/1.1\r\n\(host)Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
        501, .closed),
    HostileCase(
        "chunked on HTTP/1.0", "GET /healthz HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, .closed),
    HostileCase(
        "Transfer-Encoding before Content-Length",
        "GET /healthz HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n", 400,
        .closed, splitEverywhere: true),
    HostileCase(
        "two different Content-Lengths",
        "GET /healthz HTTP/1.1\r\n\(host)Content-Length: 3\r\nContent-Length: 30\r\n\r\nabc", 400, .closed,
        splitEverywhere: true),
    HostileCase(
        "Content-Length list that disagrees", "GET /healthz HTTP/1.1\r\n\(host)Content-Length: 3, 30\r\n\r\nabc", 400,
        .closed),
    HostileCase(
        "non-numeric Content-Length", "GET /healthz HTTP/1.1\r\n\(host)Content-Length: abc\r\n\r\n", 400, .closed),
    HostileCase("negative Content-Length", "GET /healthz HTTP/1.1\r\n\(host)Content-Length: -1\r\n\r\n", 400, .closed),
    HostileCase(
        "Content-Length with a sign", "GET /healthz HTTP/1.1\r\n\(host)Content-Length: +3\r\n\r\nabc", 400, .closed),
    HostileCase(
        "Content-Length that overflows",
        "GET /healthz HTTP/1.1\r\n\(host)Content-Length: 184467440737095516160\r\n\r\n", 400, .closed),
    HostileCase("hex Content-Length", "GET /healthz HTTP/1.1\r\n\(host)Content-Length: 0x10\r\n\r\n", 400, .closed),
    HostileCase(
        "body larger than the cap", "GET /healthz HTTP/1.1\r\n\(host)Content-Length: 1000000\r\n\r\n", 413, .closed),
    HostileCase(
        "body holding a smuggled request is skipped, not parsed",
        "GET /healthz HTTP/1.1\r\n\(host)Content-Length: 38\r\n\r\nGET /3/movie/550 HTTP/1.1\r\nHost: x\r\n\r\n", 200,
        .kept, splitEverywhere: true),
    HostileCase("HEAD with a body", "HEAD /healthz HTTP/1.1\r\n\(host)Content-Length: 4\r\n\r\nabcd", 200, .kept),

    // Header syntax (RFC 9112 §5, RFC 9110 §5.5).
    HostileCase(
        "obsolete line folding", "GET /healthz HTTP/1.1\r\n\(host)X-A: b\r\n c\r\n\r\n", 400, .closed,
        splitEverywhere: true),
    HostileCase(
        "obsolete line folding with a tab", "GET /healthz HTTP/1.1\r\n\(host)X-A: b\r\n\tc\r\n\r\n", 400, .closed),
    HostileCase("space before the colon", "GET /healthz HTTP/1.1\r\nHost : proxy.test\r\n\r\n", 400, .closed),
    HostileCase("tab before the colon", "GET /healthz HTTP/1.1\r\n\(host)X-A\t: b\r\n\r\n", 400, .closed),
    HostileCase("empty header name", "GET /healthz HTTP/1.1\r\n\(host): b\r\n\r\n", 400, .closed),
    HostileCase("invalid character in a header name", "GET /healthz HTTP/1.1\r\n\(host)X(A): b\r\n\r\n", 400, .closed),
    HostileCase("non-ASCII header name", "GET /healthz HTTP/1.1\r\n\(host)X-Ä: b\r\n\r\n", 400, .closed),
    HostileCase("NUL in a header value", "GET /healthz HTTP/1.1\r\n\(host)X-A: b\u{0}c\r\n\r\n", 400, .closed),
    HostileCase(
        "control character in a header value", "GET /healthz HTTP/1.1\r\n\(host)X-A: b\u{1}c\r\n\r\n", 400, .closed),
    HostileCase("DEL in a header value", "GET /healthz HTTP/1.1\r\n\(host)X-A: b\u{7F}c\r\n\r\n", 400, .closed),
    HostileCase(
        "bare CR in a header value", "GET /healthz HTTP/1.1\r\n\(host)X-A: b\rc\r\n\r\n", 400, .closed,
        splitEverywhere: true),
    HostileCase(
        "bare LF between header lines", "GET /healthz HTTP/1.1\r\n\(host)X-A: b\nX-B: c\r\n\r\n", 400, .closed,
        splitEverywhere: true),
    HostileCase("bare LF ending the head", "GET /healthz HTTP/1.1\n\(host)\n", 400, .closed),
    HostileCase("header line without a colon", "GET /healthz HTTP/1.1\r\n\(host)nonsense\r\n\r\n", 400, .closed),
    HostileCase("no Host in HTTP/1.1", "GET /healthz HTTP/1.1\r\n\r\n", 400, .closed),
    HostileCase("two Host fields", "GET /healthz HTTP/1.1\r\n\(host)Host: other.test\r\n\r\n", 400, .closed),

    // Request line (RFC 9112 §3).
    HostileCase("unknown method", "BREW /3/movie/550 HTTP/1.1\r\n\(host)\r\n", 405, .kept),
    HostileCase("POST", "POST /3/movie/550 HTTP/1.1\r\n\(host)Content-Length: 2\r\n\r\n{}", 405, .kept),
    HostileCase("lower-case get is another method", "get /3/movie/550 HTTP/1.1\r\n\(host)\r\n", 405, .kept),
    HostileCase("OPTIONS", "OPTIONS /3/movie/550 HTTP/1.1\r\n\(host)\r\n", 405, .kept),
    HostileCase("two spaces in the request line", "GET  /healthz HTTP/1.1\r\n\(host)\r\n", 400, .closed),
    HostileCase("leading space", " GET /healthz HTTP/1.1\r\n\(host)\r\n", 400, .closed),
    HostileCase("no version", "GET /healthz\r\n\(host)\r\n", 400, .closed),
    HostileCase("HTTP/0.9 style request", "GET /healthz\r\n\r\n", 400, .closed),
    HostileCase("HTTP/1.2", "GET /healthz HTTP/1.2\r\n\(host)\r\n", 505, .closed),
    HostileCase("HTTP/2.0 request line", "GET /healthz HTTP/2.0\r\n\(host)\r\n", 505, .closed),
    HostileCase("HTTP/2 connection preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505, .closed, splitEverywhere: true),
    HostileCase("binary garbage", "\u{16}\u{3}\u{1}\u{2}\u{0}\u{1}\u{0}\u{1}\u{fc}\u{3}\u{3}\r\n\r\n", 400, .closed),
    HostileCase(
        "TLS ClientHello",
        String(
            decoding: [0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03, 0x0d, 0x0a, 0x0d, 0x0a],
            as: UTF8.self), 400, .closed),
    HostileCase(
        "request line over 8 KiB", "GET /3/movie/550?x=\(String(repeating: "a", count: 9000)) HTTP/1.1\r\n\(host)\r\n",
        414, .closed),
    HostileCase(
        "header block over 16 KiB",
        "GET /healthz HTTP/1.1\r\n\(host)"
            + (0..<40).map { "X-Fill-\($0): \(String(repeating: "v", count: 500))\r\n" }.joined() + "\r\n", 431, .closed
    ),
    HostileCase(
        "one huge header value",
        "GET /healthz HTTP/1.1\r\n\(host)Cookie: \(String(repeating: "c", count: 17000))\r\n\r\n", 431, .closed),
    HostileCase(
        "101 header fields", "GET /healthz HTTP/1.1\r\n\(host)" + (0..<101).map { "X-\($0): v\r\n" }.joined() + "\r\n",
        431, .closed),
    HostileCase("unknown expectation", "GET /healthz HTTP/1.1\r\n\(host)Expect: 200-ok\r\n\r\n", 417, .closed),
    HostileCase(
        "Expect 100-continue without a body", "GET /healthz HTTP/1.1\r\n\(host)Expect: 100-continue\r\n\r\n", 200, .kept
    ),
    HostileCase(
        "Expect 100-continue with a body",
        "GET /healthz HTTP/1.1\r\n\(host)Expect: 100-continue\r\nContent-Length: 3\r\n\r\nabc", 200, .kept),
    HostileCase("empty lines before the request", "\r\n\r\nGET /healthz HTTP/1.1\r\n\(host)\r\n", 200, .kept),
    HostileCase("HTTP/1.0 closes without keep-alive", "GET /healthz HTTP/1.0\r\n\r\n", 200, .closed),
    HostileCase("HTTP/1.0 keep-alive", "GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", 200, .kept),
    HostileCase("Connection: close", "GET /healthz HTTP/1.1\r\n\(host)Connection: close\r\n\r\n", 200, .closed),

    // Request targets: decoded once, checked before routing (RFC 9112 §3.2, RFC 3986).
    HostileCase("encoded slash", "GET /3/movie%2F550 HTTP/1.1\r\n\(host)\r\n", 400, .closed),
    HostileCase("encoded dot-dot", "GET /3/%2e%2e/3/movie/550 HTTP/1.1\r\n\(host)\r\n", 400, .closed),
    HostileCase("dot-dot segment", "GET /3/trending/../movie/550 HTTP/1.1\r\n\(host)\r\n", 400, .closed),
    HostileCase("dot segment", "GET /3/./movie/550 HTTP/1.1\r\n\(host)\r\n", 400, .closed),
    HostileCase("empty segment", "GET /3//movie/550 HTTP/1.1\r\n\(host)\r\n", 400, .closed),
    HostileCase("trailing slash", "GET /3/movie/550/ HTTP/1.1\r\n\(host)\r\n", 400, .closed),
    HostileCase("backslash", "GET /3/movie\\550 HTTP/1.1\r\n\(host)\r\n", 400, .closed),
    HostileCase("encoded backslash", "GET /3/movie%5C550 HTTP/1.1\r\n\(host)\r\n", 400, .closed),
    HostileCase("encoded NUL in the path", "GET /3/movie/550%00 HTTP/1.1\r\n\(host)\r\n", 400, .closed),
    HostileCase("encoded NUL in the query", "GET /3/movie/550?language=en%00 HTTP/1.1\r\n\(host)\r\n", 400, .closed),
    HostileCase(
        "encoded newline in the query", "GET /3/movie/550?language=en%0d%0aX-Injected:%201 HTTP/1.1\r\n\(host)\r\n",
        400, .closed),
    HostileCase("malformed percent escape", "GET /3/movie/5%G0 HTTP/1.1\r\n\(host)\r\n", 400, .closed),
    HostileCase("invalid UTF-8 after decoding", "GET /3/movie/%C3%28 HTTP/1.1\r\n\(host)\r\n", 400, .closed),
    HostileCase("fragment", "GET /3/movie/550#top HTTP/1.1\r\n\(host)\r\n", 400, .closed),
    HostileCase("asterisk-form", "OPTIONS * HTTP/1.1\r\n\(host)\r\n", 400, .closed),
    HostileCase("authority-form", "CONNECT api.amodb.dev:443 HTTP/1.1\r\n\(host)\r\n", 400, .closed),
    HostileCase(
        "absolute-form is routed on its path", "GET http://evil.test/healthz HTTP/1.1\r\n\(host)\r\n", 200, .kept),
    HostileCase(
        "double-encoded id is decoded once", "GET /3/movie/%2535%2535%2530 HTTP/1.1\r\n\(host)\r\n", 404, .kept),

    // Routing: only exact routes go upstream.
    HostileCase("another amodb path", "GET /3/movie/popular HTTP/1.1\r\n\(host)\r\n", 404, .kept),
    HostileCase("sub-resource path", "GET /3/movie/550/credits HTTP/1.1\r\n\(host)\r\n", 404, .kept),
    HostileCase("search", "GET /3/search/movie?query=fight HTTP/1.1\r\n\(host)\r\n", 404, .kept),
    HostileCase("id zero", "GET /3/movie/0 HTTP/1.1\r\n\(host)\r\n", 404, .kept),
    HostileCase("negative id", "GET /3/movie/-550 HTTP/1.1\r\n\(host)\r\n", 404, .kept),
    HostileCase("id with a leading zero", "GET /3/movie/0550 HTTP/1.1\r\n\(host)\r\n", 404, .kept),
    HostileCase("id in exponent form", "GET /3/movie/5e2 HTTP/1.1\r\n\(host)\r\n", 404, .kept),
    HostileCase("id too large", "GET /3/movie/99999999999 HTTP/1.1\r\n\(host)\r\n", 404, .kept),
    HostileCase("upper-case media type", "GET /3/trending/MOVIE/week HTTP/1.1\r\n\(host)\r\n", 404, .kept),
    HostileCase("path without the /3 prefix", "GET /trending/movie/week HTTP/1.1\r\n\(host)\r\n", 404, .kept),
    HostileCase("page zero", "GET /3/trending/movie/week?page=0 HTTP/1.1\r\n\(host)\r\n", 400, .kept),
    HostileCase("page past 500", "GET /3/trending/movie/week?page=501 HTTP/1.1\r\n\(host)\r\n", 400, .kept),
    HostileCase("page not a number", "GET /3/trending/movie/week?page=1;DROP HTTP/1.1\r\n\(host)\r\n", 400, .kept),
    HostileCase("language given twice", "GET /3/movie/550?language=en&language=de HTTP/1.1\r\n\(host)\r\n", 400, .kept),
    HostileCase("language not a tag", "GET /3/movie/550?language=../../etc HTTP/1.1\r\n\(host)\r\n", 400, .kept),
    HostileCase(
        "sub-resources given twice",
        "GET /3/movie/550?append_to_response=credits&append_to_response=account_states HTTP/1.1\r\n\(host)\r\n", 400,
        .kept),
]

/// The stand-in and proxy every hostile case shares; the stand-in must stay untouched.
private let shared: SandboxedProxy = {
    do {
        // A generous head deadline: cases are fed a byte at a time, each once the server has
        // read the one before, which on a busy machine can take seconds. The slowloris test
        // has a proxy of its own with a short one.
        return try SandboxedProxy { $0.timeouts.requestHeadSeconds = 60 }
    } catch {
        fatalError("cannot start the proxy under test: \(error)")
    }
}()

/// Whether the shared proxy has read `count` bytes from the connection at `port`, or closed it.
private func readOrClosed(_ count: Int, port: Int) -> Bool {
    (shared.harness.proxy.server.bytesReceived(fromPeerPort: port) ?? .max) >= count
}

/// Sends `chunks` one after another, each only once the server has read the one before, so
/// the server really sees the pieces separately; returns the first response and whether
/// the connection was then closed.
private func play(_ chunks: [[UInt8]], isHead: Bool, expectKept: Bool, port: Int) async throws -> (
    RawHTTPResponse?, closed: Bool, healthy: Bool
) {
    try await offloaded {
        let connection = try RawHTTPConnection(port: port, timeout: 30)
        let local = connection.localPort
        // Generous limits (they cost nothing when the server keeps up): a loaded machine may
        // take seconds to accept and read.
        #expect(
            eventuallyBlocking(within: 30) { shared.harness.proxy.server.bytesReceived(fromPeerPort: local) != nil },
            "accepted")
        var sent = 0
        for (index, chunk) in chunks.enumerated() {
            if index > 0 {
                #expect(
                    eventuallyBlocking(within: 30) { readOrClosed(sent, port: local) }, "the server read piece \(index)"
                )
            }
            try? connection.send(chunk)  // the server may close early on an error: fine
            sent += chunk.count
        }
        let response = try connection.readResponse(forHead: isHead)
        if expectKept {
            try connection.send("GET /healthz HTTP/1.1\r\nHost: proxy.test\r\n\r\n")
            let next = try connection.readResponse()
            return (response, false, next?.status == 200)
        }
        return (response, connection.waitForClose(seconds: 3), true)
    }
}

@Suite(.timeLimit(.minutes(3)))
struct HostileInputTests {
    @Test(arguments: hostileCases)
    func answersExactlyAndKeepsOrClosesTheConnection(_ hostile: HostileCase) async throws {
        let port = shared.harness.port
        // Whole, then byte by byte (large inputs in 1 KiB pieces: a byte every few
        // milliseconds would rightly trip the request-head deadline).
        let pieceSize = hostile.bytes.count <= 512 ? 1 : 1024
        let pieces = stride(from: 0, to: hostile.bytes.count, by: pieceSize).map {
            Array(hostile.bytes[$0..<min($0 + pieceSize, hostile.bytes.count)])
        }
        var feeds: [[[UInt8]]] = [[hostile.bytes], pieces]
        if hostile.splitEverywhere {
            feeds += (1..<hostile.bytes.count).map { [Array(hostile.bytes[..<$0]), Array(hostile.bytes[$0...])] }
        }
        for chunks in feeds {
            let isHead = hostile.bytes.starts(with: Array("HEAD".utf8))
            let (response, closed, healthy) = try await play(
                chunks, isHead: isHead, expectKept: hostile.afterwards == .kept, port: port)
            let label = "\(hostile.name), in \(chunks.count) pieces"
            #expect(response?.status == hostile.status, "\(label)")
            if let response, response.status >= 400 {
                #expect(response.text.contains("\"status_message\""), "\(label): JSON error body")
                #expect(response.header("Content-Type")?.hasPrefix("application/json") == true, "\(label)")
            }
            switch hostile.afterwards {
            case .closed: #expect(closed, "\(label): connection must be closed")
            case .kept: #expect(healthy, "\(label): connection must stay usable")
            }
        }
        #expect(shared.sandbox.totalRequestCount == 0, "nothing may reach amodb")
    }

    @Test func aSlowlorisHeadGets408AndIsClosed() async throws {
        try await withServer(try SandboxedProxy { $0.timeouts.requestHeadSeconds = 1 }) { setup in
            let port = setup.harness.port
            let proxy = setup.harness.proxy
            let (response, closed) = try await offloaded {
                let connection = try RawHTTPConnection(port: port, timeout: 10)
                let local = connection.localPort
                var sent = 0
                // A byte at a time, each once the server has read the one before, until it stops
                // reading: trickling does not extend the head's deadline, so this ends in 408.
                for text in ["GET /3/movie/550 HTTP/1.1\r\nX-Slow: "] + Array(repeating: "x", count: 8000) {
                    guard (try? connection.send(text)) != nil else { break }
                    sent += text.utf8.count
                    guard
                        eventuallyBlocking(
                            within: 30, { (proxy.server.bytesReceived(fromPeerPort: local) ?? .max) >= sent }),
                        proxy.server.bytesReceived(fromPeerPort: local) != nil
                    else { break }
                }
                let response = try connection.readResponse()
                return (response, connection.waitForClose(seconds: 5))
            }
            #expect(response?.status == 408)
            #expect(closed)
            #expect(setup.sandbox.totalRequestCount == 0)
        }
    }

    @Test func aPeerThatResetsMidRequestDoesNotDisturbOthers() async throws {
        let port = shared.harness.port
        try await offloaded {
            for _ in 0..<20 {
                let connection = try RawHTTPConnection(port: port)
                try connection.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHo")
                connection.reset()
            }
        }
        let response = try await shared.harness.get("/healthz")
        #expect(response.status == 200)
    }

    @Test func aClientThatNeverReadsIsDroppedAfterTheWriteTimeoutWithAtMost256KiBUnsent() async throws {
        // 64 requests read ahead, as a greedy client pipelines: without the bound on unsent
        // output, all their answers would be queued at once.
        try await withServer(
            try SandboxedProxy {
                $0.timeouts.writeSeconds = 0.5
                $0.limits.maxPipelinedRequests = 64
            }
        ) { setup in
            let port = setup.harness.port
            let proxy = setup.harness.proxy
            // Pipeline far more ~10 KB answers than the kernel's socket buffers hold, and never read.
            _ = try await setup.harness.get("/3/trending/movie/week")
            let drained = try await offloaded {
                let connection = try RawHTTPConnection(port: port, timeout: 2)
                connection.setReceiveBuffer(bytes: 4096)
                let local = connection.localPort
                let request = Array("GET /3/trending/movie/week HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
                for _ in 0..<100 { try? connection.send(Array(repeating: request, count: 20).flatMap { $0 }) }
                // The server gives up on us once our answers have been stuck for the write timeout.
                #expect(
                    eventuallyBlocking(within: 30) { proxy.server.bytesReceived(fromPeerPort: local) == nil }, "dropped"
                )
                return connection.drainUntilClosed(seconds: 10)
            }
            #expect(drained.closed)
            // Backpressure, as docs/security.md promises: the server stopped reading requests while
            // its answers were not taken, and never held more than 256 KiB unsent.
            #expect(proxy.server.probe.peakUnsentBytes > 0)
            #expect(
                proxy.server.probe.peakUnsentBytes <= 256 * 1024,
                "peak unsent \(proxy.server.probe.peakUnsentBytes) bytes")
            #expect(try await setup.harness.get("/healthz").status == 200)
        }
    }

    @Test func pipelinedRequestsBeyondTheLimitWaitTheirTurn() async throws {
        let port = shared.harness.port
        let statuses = try await offloaded {
            let connection = try RawHTTPConnection(port: port)
            let request = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
            try connection.send(String(repeating: request, count: 100))
            var statuses: [Int] = []
            for _ in 0..<100 { statuses.append(try connection.readResponse()?.status ?? 0) }
            return statuses
        }
        #expect(statuses == Array(repeating: 200, count: 100))
    }
}
