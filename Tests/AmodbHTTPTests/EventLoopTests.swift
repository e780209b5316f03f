import AmodbHTTPTestSupport
import Dispatch
import Synchronization
import Testing

@testable import AmodbHTTP

/// Holds the loop that asks for `/hold` until the test lets go; answers anything else at once.
private final class HoldingResponder: HTTPResponder, Sendable {
    let entered = Atomic<Bool>(false)
    let release = DispatchSemaphore(value: 0)

    func respond(to request: HTTPRequest, context: ResponderContext, later: () -> ResponseDelivery) -> HTTPResponse? {
        if request.path == "/hold" {
            entered.store(true, ordering: .relaxed)
            _ = release.wait(timeout: .now() + 10)
        }
        return HTTPResponse(status: 200, body: Array("ok".utf8))
    }
}

/// An `HTTPServer` over a `HoldingResponder` on port 0, for `withServer`.
private struct HoldingServer: ScopedServer {
    let responder = HoldingResponder()
    let server: HTTPServer
    let port: Int

    init() throws {
        server = HTTPServer(configuration: .init(), responder: responder)
        port = try server.start()
    }

    func shutdown() async {
        responder.release.signal()
        await server.shutdown(gracePeriod: 0.1)
    }
}

@Suite(.timeLimit(.minutes(1)))
struct EventLoopTests {
    /// Connections that became readable while their loop was busy are all served in the
    /// loop's next wake-up: one `epoll_wait` finds them together, instead of one Dispatch
    /// source event (two `epoll_ctl`, an `ioctl` and a thread hand-off) per request.
    @Test func connectionsReadableTogetherAreServedInOneWakeUp() async throws {
        try await withServer(try HoldingServer()) { server in
            let holder = try RawHTTPConnection(port: server.port)
            try holder.send("GET /hold HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await eventually { server.responder.entered.load(ordering: .relaxed) })
            // Connections are spread round robin: every `loops`-th one shares the held loop.
            let loops = EventLoops.usableCores()
            var clients: [RawHTTPConnection] = []
            for _ in 0..<(16 * loops) {
                clients.append(try RawHTTPConnection(port: server.port))
            }
            #expect(await eventually { server.server.connectionCount == 1 + clients.count })
            for client in clients {
                try client.send("GET /now HTTP/1.1\r\nHost: x\r\n\r\n")
            }
            server.responder.release.signal()
            #expect(try holder.readResponse()?.status == 200)
            for client in clients {
                #expect(try client.readResponse()?.status == 200)
            }
            let batch = server.server.probe.largestReadyBatch
            #expect(batch >= 8, "the held loop's 16 connections were served in batches of at most \(batch)")
        }
    }
}
