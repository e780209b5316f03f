import AmodbProxy
import AmodbTestSupport
import Dispatch
import Testing

/// Answers `/slow/<ms>` after that many milliseconds and everything else at once with the path.
private struct EchoResponder: HTTPResponder {
    func respond(to request: HTTPRequest, deliver: @escaping @Sendable (HTTPResponse) -> Void) -> HTTPResponse? {
        let body = Array("\(request.method) \(request.path)".utf8)
        if request.path.hasPrefix("/slow/"), let ms = Int(request.path.dropFirst(6)) {
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(ms)) {
                deliver(HTTPResponse(status: 200, body: body))
            }
            return nil
        }
        return HTTPResponse(status: 200, body: body)
    }
}

@Suite(.timeLimit(.minutes(1)))
struct HTTPServerTests {
    private func withServer(
        limits: HTTPLimits = HTTPLimits(), timeouts: HTTPTimeouts = HTTPTimeouts(),
        _ body: (Int) throws -> Void
    ) async throws {
        let server = HTTPServer(configuration: .init(limits: limits, timeouts: timeouts), responder: EchoResponder())
        let port = try server.start()
        defer { Task { await server.shutdown(gracePeriod: 0.1) } }
        try body(port)
    }

    @Test func answersAGetAndKeepsTheConnectionOpen() async throws {
        try await withServer { port in
            let client = try RawHTTPConnection(port: port)
            for path in ["/a", "/b"] {
                try client.send("GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n")
                let response = try #require(try client.readResponse())
                #expect(response.status == 200)
                #expect(response.text == "GET \(path)")
                #expect(response.header("Content-Length") == "\(path.count + 4)")
                #expect(response.header("Date") != nil)
            }
        }
    }

    @Test func answersPipelinedRequestsInOrderEvenWhenTheFirstIsSlower() async throws {
        try await withServer { port in
            let client = try RawHTTPConnection(port: port)
            try client.send("GET /slow/200 HTTP/1.1\r\nHost: x\r\n\r\nGET /fast HTTP/1.1\r\nHost: x\r\n\r\nGET /slow/50 HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readResponse()?.text == "GET /slow/200")
            #expect(try client.readResponse()?.text == "GET /fast")
            #expect(try client.readResponse()?.text == "GET /slow/50")
        }
    }

    @Test func sendsNoBodyForHead() async throws {
        try await withServer { port in
            let client = try RawHTTPConnection(port: port)
            try client.send("HEAD /x HTTP/1.1\r\nHost: x\r\n\r\nGET /y HTTP/1.1\r\nHost: x\r\n\r\n")
            let head = try #require(try client.readResponse(forHead: true))
            #expect(head.header("Content-Length") == "7")
            #expect(head.body.isEmpty)
            #expect(try client.readResponse()?.text == "GET /y")
        }
    }

    @Test func closesAfterConnectionClose() async throws {
        try await withServer { port in
            let client = try RawHTTPConnection(port: port)
            try client.send("GET /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            let response = try #require(try client.readResponse())
            #expect(response.header("Connection") == "close")
            #expect(client.waitForClose())
        }
    }

    @Test func http10ClosesUnlessKeepAlive() async throws {
        try await withServer { port in
            let plain = try RawHTTPConnection(port: port)
            try plain.send("GET /x HTTP/1.0\r\n\r\n")
            #expect(try plain.readResponse()?.status == 200)
            #expect(plain.waitForClose())

            let kept = try RawHTTPConnection(port: port)
            try kept.send("GET /x HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            #expect(try kept.readResponse()?.header("Connection") == "keep-alive")
            #expect(!kept.waitForClose(seconds: 0.3))
        }
    }

    @Test func parsesARequestSentOneByteAtATime() async throws {
        try await withServer { port in
            let client = try RawHTTPConnection(port: port)
            for byte in Array("GET /bytes HTTP/1.1\r\nHost: x\r\n\r\n".utf8) { try client.send([byte]) }
            #expect(try client.readResponse()?.text == "GET /bytes")
        }
    }

    @Test func answers408WhenTheHeadIsTooSlow() async throws {
        var timeouts = HTTPTimeouts()
        timeouts.requestHeadSeconds = 0.3
        try await withServer(timeouts: timeouts) { port in
            let client = try RawHTTPConnection(port: port)
            try client.send("GET /x HTTP/1.1\r\nHost:")
            let response = try #require(try client.readResponse())
            #expect(response.status == 408)
            #expect(response.text.contains("status_message"))
            #expect(client.waitForClose())
        }
    }

    @Test func closesIdleKeepAliveConnections() async throws {
        var timeouts = HTTPTimeouts()
        timeouts.idleSeconds = 0.3
        try await withServer(timeouts: timeouts) { port in
            let client = try RawHTTPConnection(port: port)
            try client.send("GET /x HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readResponse()?.status == 200)
            #expect(client.waitForClose(seconds: 2))
        }
    }

    @Test func shedsConnectionsOverTheCapAndRecovers() async throws {
        var limits = HTTPLimits()
        limits.maxConnections = 3
        let server = HTTPServer(configuration: .init(limits: limits), responder: EchoResponder())
        let port = try server.start()
        defer { Task { await server.shutdown(gracePeriod: 0.1) } }

        let held = try (0..<3).map { _ in try RawHTTPConnection(port: port) }
        for connection in held {
            try connection.send("GET /held HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try connection.readResponse()?.status == 200)
        }
        let extra = try RawHTTPConnection(port: port)
        let shed = try #require(try extra.readResponse())
        #expect(shed.status == 503)
        #expect(shed.header("Retry-After") == "1")
        #expect(shed.text.contains("status_message"))
        #expect(extra.waitForClose())

        held[0].close()
        try await Task.sleep(for: .milliseconds(200))
        let next = try RawHTTPConnection(port: port)
        try next.send("GET /again HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try next.readResponse()?.text == "GET /again")
    }
}
