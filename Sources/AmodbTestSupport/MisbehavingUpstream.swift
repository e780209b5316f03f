import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// An HTTP server on 127.0.0.1, port 0, that answers every request the same hostile way
/// amodb (or something in front of it) might: a body dripped a byte at a time, a huge
/// body, a gzip bomb, the key in disguise. Raw sockets, so the bytes on the wire are
/// exactly the test's; the proxy's real `URLSessionUpstreamFetcher` talks to it.
///
/// Blocking sockets with a thread per connection: fine for a handful of test calls.
package final class MisbehavingUpstream: ScopedServer {
    /// What it does with every request.
    package enum Behaviour: Sendable {
        /// Sends `status`, the extra header fields and the body at once, then closes.
        case respond(status: Int = 200, headers: [(String, String)] = [], body: [UInt8])
        /// Sends a 200 head promising `declaredLength` bytes, then `prefix`, then one
        /// space every `interval` seconds until the length is reached.
        case drip(prefix: [UInt8], interval: Double, declaredLength: Int)
        /// Sends a 200 with a body of `length` bytes (a JSON array of zeros), 64 KiB a
        /// millisecond at most (about 64 MB/s, so a test does not eat the machine), for
        /// bodies too large to build in memory first.
        case stream(length: Int)
    }

    private struct State {
        var requests: [String] = []
        var bytesSent = 0
        var abandoned = 0
    }

    private let behaviour: Behaviour
    private let listener: ThreadedListener
    private let state = Mutex(State())
    /// The bound port.
    package var port: Int { listener.port }

    /// Listens on a port the kernel picks and serves until `shutdown()`.
    package init(_ behaviour: Behaviour) throws {
        self.behaviour = behaviour
        listener = try ThreadedListener()
        listener.start { [self] fd in
            if !serve(fd), !stopped { state.withLock { $0.abandoned += 1 } }
        }
    }

    /// The API root to give the proxy: `http://127.0.0.1:<port>/3`.
    package var baseURL: String { "http://127.0.0.1:\(port)/3" }

    /// The request heads received, in order.
    package var requests: [String] { state.withLock { $0.requests } }

    /// Body bytes written to clients so far (the head not counted).
    package var bytesSent: Int { state.withLock { $0.bytesSent } }

    /// Connections the client closed before the whole answer was sent (a cancelled transfer).
    package var abandoned: Int { state.withLock { $0.abandoned } }

    /// Stops accepting, cuts open connections and waits for every thread to end.
    package func shutdown() async {
        await listener.shutdown()
    }

    private var stopped: Bool { listener.isStopped }

    /// Reads one request head, then misbehaves; false if the client left before the end.
    private func serve(_ fd: Int32) -> Bool {
        var head: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !head.ends(with: Array("\r\n\r\n".utf8)) {
            let count = BlockingSocket.receive(fd, into: &chunk)
            guard count > 0 else { return false }
            head.append(contentsOf: chunk[..<count])
        }
        state.withLock { $0.requests.append(String(decoding: head, as: UTF8.self)) }
        switch behaviour {
        case .respond(let status, let headers, let body):
            let fields = headers.map { "\($0.0): \($0.1)\r\n" }.joined()
            return send(
                fd,
                "HTTP/1.1 \(status) Misbehaving\r\nContent-Length: \(body.count)\r\n\(fields)Connection: close\r\n\r\n")
                && send(fd, body, counted: true)
        case .drip(let prefix, let interval, let declaredLength):
            guard
                send(
                    fd,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(declaredLength)\r\nConnection: close\r\n\r\n"
                ),
                send(fd, prefix, counted: true)
            else { return false }
            for _ in prefix.count..<declaredLength {
                guard pause(interval), send(fd, [0x20], counted: true) else { return false }
            }
            return true
        case .stream(let length):
            guard
                send(
                    fd,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(length)\r\nConnection: close\r\n\r\n"
                )
            else { return false }
            let opening = Array("[".utf8)
            let closing = Array("0]".utf8)
            guard send(fd, opening, counted: true) else { return false }
            var remaining = length - opening.count - closing.count
            let block = [UInt8](repeating: 0, count: 65536).enumerated().map {
                $0.offset % 2 == 0 ? UInt8(ascii: "0") : UInt8(ascii: ",")
            }
            while remaining > 0 {
                let count = min(block.count, remaining)
                guard pause(0.001), send(fd, Array(block[..<count]), counted: true) else { return false }
                remaining -= count
            }
            return send(fd, closing, counted: true)
        }
    }

    /// Waits `seconds` in short steps, so `shutdown()` is not kept waiting; false once stopped.
    private func pause(_ seconds: Double) -> Bool {
        let end = DispatchTime.now() + seconds
        while case let now = DispatchTime.now(), now < end {
            if stopped { return false }
            usleep(UInt32(min(20_000, (end.uptimeNanoseconds - now.uptimeNanoseconds) / 1000 + 1)))
        }
        return !stopped
    }

    private func send(_ fd: Int32, _ text: String) -> Bool {
        send(fd, Array(text.utf8), counted: false)
    }

    /// Sends all of `bytes`; false when the client has gone (the proxy cut the call).
    private func send(_ fd: Int32, _ bytes: [UInt8], counted: Bool) -> Bool {
        BlockingSocket.sendAll(fd, bytes) { sent in
            if counted { state.withLock { $0.bytesSent += sent } }
        }
    }
}
