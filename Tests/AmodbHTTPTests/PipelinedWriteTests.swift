import AmodbHTTPTestSupport
import Foundation
import Glibc
import Testing

@testable import AmodbHTTP

/// Answers every request at once with a tiny body.
private struct TinyResponder: HTTPResponder {
    func respond(to request: HTTPRequest, context: ResponderContext, later: () -> ResponseDelivery) -> HTTPResponse? {
        HTTPResponse(status: 200, body: Array("ok".utf8))
    }
}

/// An `HTTPServer` over `TinyResponder` on port 0, for `withServer`.
private struct TinyServer: ScopedServer {
    let server = HTTPServer(configuration: .init(), responder: TinyResponder())
    let port: Int

    init() throws { port = try server.start() }

    func shutdown() async { await server.shutdown(gracePeriod: 0.1) }
}

/// This process's socket (the server's side: server and client share the process) whose
/// local port is `localPort` and whose peer's port is `peerPort`, found in `/proc/self/fd`.
private func serverSideSocket(localPort: Int, peerPort: Int) -> Int32? {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    for entry in entries {
        guard let fd = Int32(entry) else { continue }
        func port(_ call: (Int32, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32) -> Int? {
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let result = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { call(fd, $0, &length) }
            }
            guard result == 0, address.sin_family == sa_family_t(AF_INET) else { return nil }
            return Int(UInt16(bigEndian: address.sin_port))
        }
        if port(getsockname) == localPort, port(getpeername) == peerPort { return fd }
    }
    return nil
}

@Suite(.timeLimit(.minutes(1)))
struct PipelinedWriteTests {
    /// "Read once, parse every pipelined request, write once": answers given at once to
    /// requests that arrived together leave in one `sendmsg`, not one each.
    @Test func pipelinedRequestsReadTogetherAreAnsweredWithOneWrite() async throws {
        try await withServer(try TinyServer()) { server in
            let client = try RawHTTPConnection(port: server.port)
            try client.send(String(repeating: "GET / HTTP/1.1\r\nHost: x\r\n\r\n", count: 12))
            for _ in 0..<12 { #expect(try client.readResponse()?.status == 200) }
            let counts = try #require(server.server.syscallCounts(ofPeerPort: client.localPort))
            #expect(counts.reads >= 1)
            #expect(counts.sends <= counts.reads, "one write per read, saw \(counts.sends) for \(counts.reads) reads")
        }
    }

    /// Nagle's algorithm held each pipelined answer written after the first until the
    /// client's delayed ACK: batches of 16 pipelined requests ran at ~700 req/s.
    @Test func acceptedConnectionsSendWithoutNaglesDelay() async throws {
        try await withServer(try TinyServer()) { server in
            let client = try RawHTTPConnection(port: server.port)
            try client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readResponse()?.status == 200)
            let fd = try #require(serverSideSocket(localPort: server.port, peerPort: client.localPort))
            var value: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            #expect(getsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &value, &length) == 0)
            #expect(value != 0)
        }
    }
}
