import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP relay on 127.0.0.1 to a server on another loopback port, that a test can cut: one
/// replica's own link to Redis, stalled or refused while the others' work (a partition of
/// that replica alone). Open, it passes bytes both ways; stalled, it holds them (the
/// connections stay open and nothing arrives, as with a frozen link); refusing, it closes
/// every connection and each new one at once.
public final class TCPRelay: Sendable {
    /// What the relay does with bytes.
    public enum Mode: Sendable {
        case open, stalled, refusing
    }

    private let listener: ThreadedListener
    private let targetPort: Int
    private let mode = Mutex(Mode.open)
    /// Signalled when the mode changes: a stalled connection's thread sleeps on it, not in a
    /// polling loop (a client that reconnects through a stalled link leaves one such thread
    /// per attempt, and a hundred threads polling would take a core from the tests beside).
    private let changed = NSCondition()
    /// The port to connect to instead of the target's.
    public var port: Int { listener.port }

    /// A relay to `127.0.0.1:targetPort`, open.
    public init(to targetPort: Int) throws {
        self.targetPort = targetPort
        listener = try ThreadedListener()
        listener.start { [self] client in relay(client) }
    }

    /// Sets what the relay does from now on.
    public func set(_ mode: Mode) {
        self.mode.withLock { $0 = mode }
        changed.lock()
        changed.broadcast()
        changed.unlock()
    }

    /// Stops relaying and closes every connection.
    public func shutdown() async {
        set(.refusing)
        await listener.shutdown()
    }

    private func relay(_ client: Int32) {
        guard mode.withLock({ $0 }) != .refusing, let server = Self.connect(port: targetPort) else { return }
        defer { close(server) }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !listener.isStopped {
            switch mode.withLock({ $0 }) {
            case .refusing: return
            case .stalled:
                changed.lock()
                if mode.withLock({ $0 }) == .stalled { _ = changed.wait(until: Date().addingTimeInterval(1)) }
                changed.unlock()
                continue
            case .open: break
            }
            var fds = [
                pollfd(fd: client, events: Int16(POLLIN), revents: 0),
                pollfd(fd: server, events: Int16(POLLIN), revents: 0),
            ]
            let ready = fds.withUnsafeMutableBufferPointer { poll($0.baseAddress, 2, 50) }
            if ready < 0, errno == EINTR { continue }
            guard ready >= 0 else { return }
            for (index, entry) in fds.enumerated() where entry.revents != 0 {
                let from = index == 0 ? client : server
                let to = index == 0 ? server : client
                let count = BlockingSocket.receive(from, into: &buffer)
                guard count > 0, BlockingSocket.sendAll(to, Array(buffer[0..<count])) else { return }
            }
        }
    }

    /// A blocking connection to `127.0.0.1:port`, or `nil`.
    private static func connect(port: Int) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            return nil
        }
        return fd
    }
}
