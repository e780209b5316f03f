import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A listening socket on 127.0.0.1, port 0, that hands each accepted connection to a
/// thread of its own, for test servers whose bytes on the wire must be exactly the test's
/// (a misbehaving amodb, a hostile Redis). Blocking sockets and a thread per connection:
/// fine for a handful of test calls, never for the proxy.
public final class ThreadedListener: Sendable {
    private struct State {
        var stopped = false
        var connections: Set<Int32> = []
    }

    private let listener: Int32
    private let state = Mutex(State())
    private let threads = DispatchGroup()
    /// The bound port.
    public let port: Int

    /// Listens on a port the kernel picks; nothing is accepted until `start(_:)`.
    public init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawHTTPError.connect(errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
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
    }

    /// Accepts until `shutdown()`, running `serve` on each connection in a thread of its
    /// own; the connection is closed when `serve` returns.
    public func start(_ serve: @escaping @Sendable (Int32) -> Void) {
        spawn { [self] in acceptLoop(serve) }
    }

    /// Whether `shutdown()` has begun: a connection's work stops early then.
    public var isStopped: Bool { state.withLock { $0.stopped } }

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

    private func acceptLoop(_ serve: @escaping @Sendable (Int32) -> Void) {
        while !isStopped {
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
}
