import AmodbHTTP
import AmodbHTTPTestSupport
import Testing

/// Answers every request it is asked with 200.
private struct OKResponder: HTTPResponder {
    func respond(to request: HTTPRequest, context: ResponderContext, later: () -> ResponseDelivery) -> HTTPResponse? {
        HTTPResponse(status: 200, body: Array("ok".utf8))
    }
}

/// A server whose refusals are worded by the application, as the proxy and the stand-in word theirs.
private struct WordingServer: ScopedServer {
    let server: HTTPServer
    let port: Int

    init(limits: HTTPLimits = HTTPLimits(), timeouts: HTTPTimeouts = HTTPTimeouts()) throws {
        let configuration = HTTPServer.Configuration(limits: limits, timeouts: timeouts) { status, message in
            var headers = HTTPHeaders()
            headers.set("Content-Type", "application/x-refusal")
            return HTTPResponse(status: status, headers: headers, body: Array("refused \(status): \(message)".utf8))
        }
        server = HTTPServer(configuration: configuration, responder: OKResponder())
        port = try server.start()
    }

    func shutdown() async {
        await server.shutdown(gracePeriod: 0.1)
    }
}

/// The server knows no application's error shape: what it refuses itself is worded by its configuration.
@Suite(.timeLimit(.minutes(1)))
struct ServerErrorResponseTests {
    @Test(arguments: [
        ("GET /x#top HTTP/1.1\r\nHost: x\r\n\r\n", 400, "Invalid request target."),
        ("GET /\(String(repeating: "a", count: 64)) HTTP/1.1\r\nHost: x\r\n\r\n", 414, "The request line is too long."),
        (
            "GET /x HTTP/1.1\r\nHost: x\r\nCookie: \(String(repeating: "c", count: 64))\r\n\r\n", 431,
            "The request header fields are too large."
        ),
        ("GET /x HTTP/1.1\r\nHost: x\r\nContent-Length: 17\r\n\r\n", 413, "The request body is too large."),
        (
            "GET /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501,
            "Only the chunked transfer coding is supported on requests."
        ),
        ("GET /x HTTP/1.2\r\nHost: x\r\n\r\n", 505, "Only HTTP/1.0 and HTTP/1.1 are supported."),
    ])
    func aRefusedRequestGetsTheApplicationsErrorBody(request: String, status: Int, message: String) async throws {
        // Small limits, so the requests over them stay short.
        var limits = HTTPLimits()
        limits.maxRequestLineBytes = 48
        limits.maxHeaderBytes = 64
        limits.maxBodyBytes = 16
        try await withServer(try WordingServer(limits: limits)) { setup in
            let port = setup.port
            let (response, closed) = try await offloaded {
                let client = try RawHTTPConnection(port: port)
                try client.send(request)
                return (try client.readResponse(), client.waitForClose())
            }
            #expect(response?.status == status)
            #expect(response?.text == "refused \(status): \(message)")
            #expect(response?.header("Content-Type") == "application/x-refusal")
            #expect(response?.header("Connection") == "close")
            #expect(closed)
        }
    }

    @Test func aNewcomerShedAtTheConnectionCapGetsTheApplicationsErrorBody() async throws {
        var limits = HTTPLimits()
        limits.maxConnections = 1
        // The one slot's silent connection is not slow for a minute, so none can make room.
        var timeouts = HTTPTimeouts()
        timeouts.slowPeerSeconds = 60
        try await withServer(try WordingServer(limits: limits, timeouts: timeouts)) { setup in
            let holder = try RawHTTPConnection(port: setup.port)
            let holderPort = holder.localPort
            #expect(await eventually { setup.server.bytesReceived(fromPeerPort: holderPort) != nil }, "accepted")
            let port = setup.port
            let shed = try await offloaded { try RawHTTPConnection(port: port).readResponse() }
            #expect(shed?.status == 503)
            #expect(shed?.text == "refused 503: The server is at its connection limit; try again shortly.")
            #expect(shed?.header("Retry-After") == "1")
            holder.close()
        }
    }
}
