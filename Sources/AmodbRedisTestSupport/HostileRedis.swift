package import AmodbTestSupport
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A server on 127.0.0.1, port 0, that speaks just enough RESP2 to look like Redis and
/// then answers as a hostile or broken one might: every read from a client is answered
/// with the next of `replies` (the last one repeated), and the connection is left open.
/// Raw sockets, so the bytes on the wire are exactly the test's; the real `RedisClient`
/// talks to it. Not a mock of the client: nothing on the client's side is replaced.
///
/// Blocking sockets with a thread per connection: fine for a handful of test calls.
package final class HostileRedis: ScopedServer {
    private let replies: [[UInt8]]
    private let listener: ThreadedListener
    private let readCount = Mutex(0)
    /// The bound port.
    package var port: Int { listener.port }

    /// Listens on a port the kernel picks; `replies[n]` answers a connection's n-th read.
    package init(replies: [[UInt8]]) throws {
        precondition(!replies.isEmpty)
        self.replies = replies
        listener = try ThreadedListener()
        listener.start { [self] fd in serve(fd) }
    }

    /// Reads received from clients so far, over every connection.
    package var reads: Int { readCount.withLock { $0 } }

    /// Stops accepting, cuts open connections and waits for every thread to end.
    package func shutdown() async {
        await listener.shutdown()
    }

    /// Answers each read with the next reply until the client leaves or the server stops.
    private func serve(_ fd: Int32) {
        var chunk = [UInt8](repeating: 0, count: 4096)
        var index = 0
        while true {
            guard BlockingSocket.receive(fd, into: &chunk) > 0 else { return }
            readCount.withLock { $0 += 1 }
            let reply = replies[min(index, replies.count - 1)]
            index += 1
            guard BlockingSocket.sendAll(fd, reply) else { return }
        }
    }
}
