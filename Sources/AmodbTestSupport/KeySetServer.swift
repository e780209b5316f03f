import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A sign-in provider's key set endpoint on 127.0.0.1, port 0, whose answer a test changes
/// as it goes: the set (a rotation), a status, a redirect, or nothing at all (down: the
/// connection is closed unanswered). It counts the requests it got and keeps their heads.
package final class KeySetServer: ScopedServer {
    /// What it answers with.
    package enum Answer: Sendable {
        /// 200 with this body.
        case keySet([UInt8])
        /// This status, an empty JSON body.
        case status(Int)
        /// 302 to `location`.
        case redirect(String)
        /// Closes the connection without a byte.
        case down
    }

    private let listener: ThreadedListener
    private let state: Mutex<(answer: Answer, requests: [String])>

    /// The bound port.
    package var port: Int { listener.port }
    /// The set's URL, as `AMODB_JWT_JWKS_URL`.
    package var url: String { "http://127.0.0.1:\(port)/.well-known/jwks.json" }

    /// Listens on a port the kernel picks, answering `answer` until told otherwise.
    package init(_ answer: Answer) throws {
        state = Mutex((answer, []))
        listener = try ThreadedListener()
        listener.start { [self] fd in serve(fd) }
    }

    /// Answers `answer` from now on.
    package func answer(_ answer: Answer) {
        state.withLock { $0.answer = answer }
    }

    /// Requests received so far (also those answered with `down`).
    package var requestCount: Int { state.withLock { $0.requests.count } }

    /// The request heads received, in order.
    package var requests: [String] { state.withLock { $0.requests } }

    package func shutdown() async {
        await listener.shutdown()
    }

    private func serve(_ fd: Int32) {
        var head: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !head.ends(with: Array("\r\n\r\n".utf8)) {
            let count = BlockingSocket.receive(fd, into: &chunk)
            guard count > 0 else { return }
            head.append(contentsOf: chunk[..<count])
        }
        let answer = state.withLock { state -> Answer in
            state.requests.append(String(decoding: head, as: UTF8.self))
            return state.answer
        }
        let response: [UInt8]
        switch answer {
        case .keySet(let body):
            response =
                Array(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
                        .utf8) + body
        case .status(let status):
            response = Array(
                "HTTP/1.1 \(status) Failing\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"
                    .utf8)
        case .redirect(let location):
            response = Array(
                "HTTP/1.1 302 Found\r\nLocation: \(location)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)
        case .down:
            return
        }
        _ = BlockingSocket.sendAll(fd, response)
    }
}
