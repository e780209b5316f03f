import AmodbHTTP
import AmodbHTTPTestSupport
import Testing

/// Answers `/abort/<n>` with a 1000-byte body that aborts after `n` bytes, anything else
/// with the same body whole.
private struct AbortingResponder: HTTPResponder {
    static let body = Array(repeating: UInt8(ascii: "a"), count: 1000)

    func respond(to request: HTTPRequest, context: ResponderContext, later: () -> ResponseDelivery) -> HTTPResponse? {
        var response = HTTPResponse(status: 200, body: Self.body)
        if request.path.hasPrefix("/abort/") {
            response.connection = .abortAfterBodyBytes(Int(request.path.dropFirst(7)) ?? 0)
        }
        return response
    }
}

/// An `HTTPServer` over `AbortingResponder` on port 0.
private struct AbortingServer: ScopedServer {
    let server = HTTPServer(configuration: .init(), responder: AbortingResponder())
    let port: Int

    init() throws {
        port = try server.start()
    }

    func shutdown() async {
        await server.shutdown(gracePeriod: 0.1)
    }
}

/// A response can fail mid-body the way a failing origin's does: the head announces the
/// whole body, part of it goes out, then the connection ends (an incomplete message, RFC 9112 §8).
@Suite(.timeLimit(.minutes(1)))
struct AbortedBodyTests {
    @Test(arguments: [0, 1, 500, 999])
    func sendsTheHeadAndTheFirstBodyBytesThenClosesAnsweringNothingAfter(after: Int) async throws {
        try await withServer(try AbortingServer()) { setup in
            let port = setup.port
            try await offloaded {
                // The same answer whole, on a connection that closes after it: the same head.
                let whole = try RawHTTPConnection(port: port)
                try whole.send("GET /whole HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                let complete = whole.drainUntilClosed(seconds: 5)
                // A request pipelined behind the aborted one is never answered.
                let cut = try RawHTTPConnection(port: port)
                try cut.send("GET /abort/\(after) HTTP/1.1\r\nHost: x\r\n\r\nGET /whole HTTP/1.1\r\nHost: x\r\n\r\n")
                let aborted = cut.drainUntilClosed(seconds: 5)
                #expect(complete.closed)
                #expect(aborted.closed, "the connection ends after the aborted body")
                #expect(aborted.bytes == complete.bytes - (AbortingResponder.body.count - after))
            }
        }
    }

    @Test func theHeadAnnouncesTheWholeBody() async throws {
        try await withServer(try AbortingServer()) { setup in
            let port = setup.port
            let outcome = try await offloaded { () -> RawHTTPError? in
                let client = try RawHTTPConnection(port: port)
                try client.send("GET /abort/10 HTTP/1.1\r\nHost: x\r\n\r\n")
                do {
                    _ = try client.readResponse()
                    return nil
                } catch let error as RawHTTPError {
                    return error
                }
            }
            guard case .closedMidResponse = outcome else {
                Issue.record("expected the connection to close mid-body, got \(String(describing: outcome))")
                return
            }
        }
    }
}
