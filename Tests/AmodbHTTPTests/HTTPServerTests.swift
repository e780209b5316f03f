import AmodbHTTPTestSupport
import Dispatch
import Synchronization
import Testing

@testable import AmodbHTTP

/// Answers `/slow/<ms>` after that many milliseconds, `/big/<n>` with an n-byte body,
/// `/gate` only when the test opens the gate, and everything else at once with the path.
private final class EchoResponder: HTTPResponder {
    private let gated = Mutex<[@Sendable (HTTPResponse) -> Void]>([])

    func respond(to request: HTTPRequest, context: ResponderContext, later: () -> ResponseDelivery) -> HTTPResponse? {
        let body = Array("\(request.method) \(request.path)".utf8)
        if request.path.hasPrefix("/slow/"), let ms = Int(request.path.dropFirst(6)) {
            let deliver = later()
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(ms)) {
                deliver(HTTPResponse(status: 200, body: body))
            }
            return nil
        }
        if request.path.hasPrefix("/big/"), let size = Int(request.path.dropFirst(5)) {
            return HTTPResponse(status: 200, body: Array(repeating: UInt8(ascii: "b"), count: size))
        }
        if request.path == "/gate" {
            let deliver = later()
            gated.withLock { $0.append(deliver) }
            return nil
        }
        return HTTPResponse(status: 200, body: body)
    }

    /// Requests waiting at the gate.
    var waiting: Int { gated.withLock { $0.count } }

    /// Answers every request waiting at the gate.
    func openGate() {
        let waiting = gated.withLock { gated in
            defer { gated = [] }
            return gated
        }
        waiting.forEach { $0(HTTPResponse(status: 200, body: Array("gate".utf8))) }
    }
}

/// An `HTTPServer` over `EchoResponder` on port 0, for `withServer`, which awaits its shutdown.
private struct EchoServer: ScopedServer {
    let server: HTTPServer
    let responder = EchoResponder()
    let port: Int

    init(limits: HTTPLimits = HTTPLimits(), timeouts: HTTPTimeouts = HTTPTimeouts()) throws {
        server = HTTPServer(configuration: .init(limits: limits, timeouts: timeouts), responder: responder)
        port = try server.start()
    }

    /// A server that holds `maxConnections` at most, a peer counting as slow after `slowPeerSeconds`.
    init(maxConnections: Int, slowPeerSeconds: Double = HTTPTimeouts().slowPeerSeconds) throws {
        var limits = HTTPLimits()
        limits.maxConnections = maxConnections
        var timeouts = HTTPTimeouts()
        timeouts.slowPeerSeconds = slowPeerSeconds
        try self.init(limits: limits, timeouts: timeouts)
    }

    /// Opens `count` connections, oldest first, each with a head's first 19 bytes sent and read.
    func partialHeads(_ count: Int) throws -> [RawHTTPConnection] {
        let connections = try (0..<count).map { _ in try RawHTTPConnection(port: port) }
        for connection in connections {
            try connection.send("GET /x HTTP/1.1\r\nHo")
            #expect(waitUntilRead(19, from: connection))
        }
        return connections
    }

    func shutdown() async {
        responder.openGate()
        await server.shutdown(gracePeriod: 0.1)
    }

    /// Waits until the server has accepted `connection` and read `count` bytes from it.
    func waitUntilRead(_ count: Int, from connection: RawHTTPConnection) -> Bool {
        let port = connection.localPort
        return eventuallyBlocking { (server.bytesReceived(fromPeerPort: port) ?? 0) >= count }
    }

    /// Waits until the server has read `count` bytes from `connection`, or no longer has it open.
    func waitUntilReadOrClosed(_ count: Int, from connection: RawHTTPConnection) -> Bool {
        let port = connection.localPort
        return eventuallyBlocking { (server.bytesReceived(fromPeerPort: port) ?? .max) >= count }
    }
}

@Suite(.timeLimit(.minutes(1)))
struct HTTPServerTests {
    private func withServer(
        limits: HTTPLimits = HTTPLimits(), timeouts: HTTPTimeouts = HTTPTimeouts(),
        _ body: @escaping @Sendable (Int) throws -> Void
    ) async throws {
        try await AmodbHTTPTestSupport.withServer(try EchoServer(limits: limits, timeouts: timeouts)) { server in
            let port = server.port
            try await offloaded { try body(port) }
        }
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
            try client.send(
                "GET /slow/200 HTTP/1.1\r\nHost: x\r\n\r\nGET /fast HTTP/1.1\r\nHost: x\r\n\r\nGET /slow/50 HTTP/1.1\r\nHost: x\r\n\r\n"
            )
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
            #expect(
                response.text == "The request head did not arrive in time.\n",
                "plain text when the application words nothing")
            #expect(response.header("Content-Type") == "text/plain;charset=utf-8")
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

    @Test func shedsConnectionsOverTheCapWhenNoneIsSlowOrIdleAndRecovers() async throws {
        try await AmodbHTTPTestSupport.withServer(try EchoServer(maxConnections: 3)) { setup in
            // Three connections busy with a request that waits at the gate: none may be closed for a newcomer.
            let held = try (0..<3).map { _ in try RawHTTPConnection(port: setup.port) }
            for connection in held { try connection.send("GET /gate HTTP/1.1\r\nHost: x\r\n\r\n") }
            #expect(await eventually { setup.responder.waiting == 3 })
            let shed = try await offloaded {
                let extra = try RawHTTPConnection(port: setup.port)
                return (try extra.readResponse(), extra.waitForClose())
            }
            #expect(shed.0?.status == 503)
            #expect(shed.0?.header("Retry-After") == "1")
            #expect(shed.0?.text == "The server is at its connection limit; try again shortly.\n")
            #expect(shed.1)
            #expect(setup.server.probe.evictions == 0)

            setup.responder.openGate()
            for connection in held { #expect(try connection.readResponse()?.text == "gate") }
            // The slot a closed connection frees is taken by the next one.
            held[0].close()
            held[1].close()
            held[2].close()
            #expect(await eventually { setup.server.connectionCount == 0 })
            let next = try await offloaded {
                let next = try RawHTTPConnection(port: setup.port)
                try next.send("GET /again HTTP/1.1\r\nHost: x\r\n\r\n")
                return try next.readResponse()?.text
            }
            #expect(next == "GET /again")
        }
    }

    @Test func closesTheSlowestHeadToMakeRoomWhenFull() async throws {
        // A head still arriving counts as slow at once.
        try await AmodbHTTPTestSupport.withServer(try EchoServer(maxConnections: 3, slowPeerSeconds: 0)) { setup in
            try await offloaded {
                // Oldest first: each partial head is known read before the next is sent.
                let slow = try setup.partialHeads(3)
                let newcomer = try RawHTTPConnection(port: setup.port)
                try newcomer.send("GET /new HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(try newcomer.readResponse()?.text == "GET /new")
                #expect(slow[0].waitForClose(), "the oldest slow head made room")
                #expect(
                    setup.server.bytesReceived(fromPeerPort: slow[1].localPort) != nil, "the others keep their slots")
                #expect(setup.server.bytesReceived(fromPeerPort: slow[2].localPort) != nil)
                #expect(setup.server.probe.evictions == 1)
            }
        }
    }

    @Test func headsStillWithinTheSlowThresholdKeepTheirSlots() async throws {
        try await AmodbHTTPTestSupport.withServer(try EchoServer(maxConnections: 2, slowPeerSeconds: 600)) { setup in
            try await offloaded {
                let partial = try setup.partialHeads(2)
                let extra = try RawHTTPConnection(port: setup.port)
                #expect(try extra.readResponse()?.status == 503)
                for connection in partial {
                    try connection.send("st: x\r\n\r\n")
                    #expect(try connection.readResponse()?.text == "GET /x")
                }
            }
        }
    }

    @Test func newConnectionsGetTheSlowThresholdToSendTheirFirstHead() async throws {
        try await AmodbHTTPTestSupport.withServer(try EchoServer(maxConnections: 2, slowPeerSeconds: 600)) { setup in
            try await offloaded {
                let fresh = try (0..<2).map { _ in try RawHTTPConnection(port: setup.port) }
                for connection in fresh {
                    let port = connection.localPort
                    #expect(eventuallyBlocking { setup.server.bytesReceived(fromPeerPort: port) != nil }, "accepted")
                }
                let extra = try RawHTTPConnection(port: setup.port)
                #expect(try extra.readResponse()?.status == 503)
                for connection in fresh {
                    try connection.send("GET /first HTTP/1.1\r\nHost: x\r\n\r\n")
                    #expect(try connection.readResponse()?.text == "GET /first")
                }
            }
        }
    }

    @Test func closesTheLongestIdleKeepAliveConnectionToMakeRoomWhenFull() async throws {
        try await AmodbHTTPTestSupport.withServer(try EchoServer(maxConnections: 3)) { setup in
            try await offloaded {
                let idle = try (0..<3).map { _ in try RawHTTPConnection(port: setup.port) }
                for connection in idle {
                    try connection.send("GET /once HTTP/1.1\r\nHost: x\r\n\r\n")
                    #expect(try connection.readResponse()?.status == 200)
                    let port = connection.localPort
                    #expect(eventuallyBlocking { setup.server.reclaimableKind(ofPeerPort: port) == .idle })
                }
                let newcomer = try RawHTTPConnection(port: setup.port)
                try newcomer.send("GET /new HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(try newcomer.readResponse()?.text == "GET /new")
                #expect(idle[0].waitForClose(), "the longest idle made room")
                #expect(setup.server.bytesReceived(fromPeerPort: idle[2].localPort) != nil)
                try idle[2].send("GET /still HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(try idle[2].readResponse()?.text == "GET /still")
            }
        }
    }

    @Test func aBodyThatTricklesGets408WhenItsOwnDeadlinePasses() async throws {
        var limits = HTTPLimits()
        limits.maxBodyBytes = 1_000_000
        var timeouts = HTTPTimeouts()
        timeouts.requestBodySeconds = 0.3
        timeouts.idleSeconds = 600
        try await AmodbHTTPTestSupport.withServer(try EchoServer(limits: limits, timeouts: timeouts)) { setup in
            let response = try await offloaded {
                let client = try RawHTTPConnection(port: setup.port)
                let head = "GET /x HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n"
                try client.send(head)
                #expect(setup.waitUntilRead(head.utf8.count, from: client))
                // A byte at a time, each once the server has read the one before, until the server
                // stops reading or closes: reading is not activity, so the body's own deadline
                // ends this long before a megabyte could arrive. (The client gives up after 10 s
                // whatever happens, so a server without the deadline fails here instead of hanging.)
                var sent = head.utf8.count
                let givingUp = ContinuousClock.now + .seconds(10)
                while ContinuousClock.now < givingUp, (try? client.send("b")) != nil {
                    sent += 1
                    guard setup.waitUntilReadOrClosed(sent, from: client),
                        setup.server.bytesReceived(fromPeerPort: client.localPort) != nil
                    else { break }
                }
                return (try client.readResponse(), client.waitForClose())
            }
            #expect(response.0?.status == 408)
            #expect(response.0?.text == "The request body did not arrive in time.\n")
            #expect(response.1, "closed after the 408")
        }
    }

    @Test func keepsUnsentOutputWithinItsBoundWhenTheClientDoesNotRead() async throws {
        try await AmodbHTTPTestSupport.withServer(try EchoServer()) { setup in
            let count = 16
            let size = 100_000
            let bodies = try await offloaded {
                let client = try RawHTTPConnection(port: setup.port, timeout: 10)
                let requests = String(repeating: "GET /big/\(size) HTTP/1.1\r\nHost: x\r\n\r\n", count: count)
                try client.send(requests)
                // Every request read and answered while the client reads nothing yet.
                #expect(setup.waitUntilRead(requests.utf8.count, from: client))
                #expect(eventuallyBlocking { setup.server.probe.peakUnsentBytes > 0 })
                return try (0..<count).map { _ in try client.readResponse()?.body.count }
            }
            #expect(bodies == Array(repeating: size, count: count), "every answer arrives, in full")
            #expect(
                setup.server.probe.peakUnsentBytes <= ConnectionStateMachine.maxUnsentBytes,
                "at most 256 KiB unsent, saw \(setup.server.probe.peakUnsentBytes)")
        }
    }
}
