public import AmodbTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A server on 127.0.0.1, port 0, that speaks just enough RESP2 to look like Redis and
/// then answers as a hostile or broken one might: every read from a client is answered
/// with the next of `replies` (the last one repeated), and the connection is left open.
/// Raw sockets, so the bytes on the wire are exactly the test's; the real `RedisClient`
/// talks to it. Not a mock of the client: nothing on the client's side is replaced.
///
/// Blocking sockets with a thread per connection: fine for a handful of test calls.
public final class HostileRedis: ScopedServer {
    private struct State {
        var stopped = false
        var connections: Set<Int32> = []
        var reads = 0
    }

    private let replies: [[UInt8]]
    private let listener: Int32
    private let state = Mutex(State())
    private let threads = DispatchGroup()
    /// The bound port.
    public let port: Int

    /// Listens on a port the kernel picks; `replies[n]` answers a connection's n-th read.
    public init(replies: [[UInt8]]) throws {
        precondition(!replies.isEmpty)
        self.replies = replies
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawHTTPError.connect(errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard bound == 0, listen(fd, 16) == 0, named == 0 else {
            let code = errno
            close(fd)
            throw RawHTTPError.connect(code)
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        spawn { [self] in acceptLoop() }
    }

    /// Reads received from clients so far, over every connection.
    public var reads: Int { state.withLock { $0.reads } }

    /// Stops accepting, cuts open connections and waits for every thread to end.
    public func shutdown() async {
        let open = state.withLock { state -> Set<Int32> in
            state.stopped = true
            return state.connections
        }
        Glibc.shutdown(listener, Int32(SHUT_RDWR))
        for fd in open { Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
        let threads = threads
        await withCheckedContinuation { continuation in
            threads.notify(queue: .global()) { continuation.resume() }
        }
        close(listener)
    }

    private func spawn(_ work: @escaping @Sendable () -> Void) {
        threads.enter()
        let threads = threads
        Thread {
            work()
            threads.leave()
        }.start()
    }

    private func acceptLoop() {
        while true {
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else {
                if errno == EINTR { continue }
                return
            }
            let admitted = state.withLock { state -> Bool in
                guard !state.stopped else { return false }
                state.connections.insert(fd)
                return true
            }
            guard admitted else {
                close(fd)
                return
            }
            spawn { [self] in
                serve(fd)
                state.withLock { _ = $0.connections.remove(fd) }
                close(fd)
            }
        }
    }

    /// Answers each read with the next reply until the client leaves or the server stops.
    private func serve(_ fd: Int32) {
        var chunk = [UInt8](repeating: 0, count: 4096)
        var index = 0
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return }
            state.withLock { $0.reads += 1 }
            let reply = replies[min(index, replies.count - 1)]
            index += 1
            var offset = 0
            while offset < reply.count {
                let sent = reply[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if sent < 0, errno == EINTR { continue }
                guard sent > 0 else { return }
                offset += sent
            }
        }
    }
}
