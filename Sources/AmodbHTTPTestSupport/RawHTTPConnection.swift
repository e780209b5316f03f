import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A response as read off the wire by `RawHTTPConnection`.
public struct RawHTTPResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    /// The first value of a header, case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The body as UTF-8 text.
    public var text: String { String(decoding: body, as: UTF8.self) }

    /// The status and fields of `head` (its status line and fields, without the blank line
    /// that ends it); no body yet.
    public init(head: String) throws {
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            throw RawHTTPError.malformed(statusLine)
        }
        var headers: [(name: String, value: String)] = []
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { throw RawHTTPError.malformed(line) }
            headers.append(
                (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        self.init(status: status, headers: headers, body: [])
    }

    /// The one response in `bytes` (a head, then exactly the body it frames), as
    /// `RawHTTPConnection.readResponse` reads it off the wire.
    public init(bytes: [UInt8]) throws {
        let terminator = Array("\r\n\r\n".utf8)
        guard let end = bytes.indices.first(where: { bytes[$0...].starts(with: terminator) }) else {
            throw RawHTTPError.closedMidResponse(received: bytes.count)
        }
        try self.init(head: String(decoding: bytes[..<end], as: UTF8.self))
        body = Array(bytes[(end + 4)...])
    }

    /// A response of `status` with `headers` and `body`.
    public init(status: Int, headers: [(name: String, value: String)], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// What went wrong talking to the server under test.
public enum RawHTTPError: Error, CustomStringConvertible {
    case connect(Int32)
    case send(Int32)
    case timedOut
    case closedMidResponse(received: Int)
    case malformed(String)

    public var description: String {
        switch self {
        case .connect(let code): "connect failed (errno \(code))"
        case .send(let code): "send failed (errno \(code))"
        case .timedOut: "timed out waiting for the server"
        case .closedMidResponse(let received): "connection closed after \(received) bytes of a response"
        case .malformed(let what): "malformed response: \(what)"
        }
    }
}

/// A blocking TCP client for tests: sends exact bytes and reads exact responses,
/// so tests can assert what is on the wire (status, fields, framing, closing).
public final class RawHTTPConnection {
    private let fd: Int32
    var fdForExtensions: Int32 { fd }
    private var buffer: [UInt8] = []
    private var closed = false

    /// Connects to `host:port` (IPv4 loopback by default); reads give up after `timeout` seconds
    /// (generous by default: a loaded machine may take seconds to answer; see `eventually`).
    public init(port: Int, host: String = "127.0.0.1", timeout: Double = 30) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else {
            closed = true
            throw RawHTTPError.connect(errno)
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, host, &address.sin_addr)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            // Closed here and marked so: `deinit` still runs for a fully initialized object
            // that throws, and a second close could hit a descriptor another thread (or the
            // server under test, in this process) has just been given.
            Glibc.close(fd)
            closed = true
            throw RawHTTPError.connect(code)
        }
        setTimeout(timeout)
    }

    deinit {
        if !closed { Glibc.close(fd) }
    }

    /// Sets how long a read (or a send into a full buffer) waits before giving up.
    public func setTimeout(_ seconds: Double) {
        var time = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - Double(Int(seconds))) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Sends all of `bytes`.
    public func send(_ bytes: [UInt8]) throws {
        guard BlockingSocket.sendAll(fd, bytes) else { throw RawHTTPError.send(errno) }
    }

    /// Sends text as UTF-8.
    public func send(_ text: String) throws {
        try send(Array(text.utf8))
    }

    /// Half-closes our side: the server reads end of stream.
    public func shutdownWrite() {
        Glibc.shutdown(fd, Int32(SHUT_WR))
    }

    /// Closes the socket.
    public func close() {
        if !closed { Glibc.close(fd) }
        closed = true
    }

    /// Reads more bytes into the buffer; false at end of stream (or reset).
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = BlockingSocket.receive(fd, into: &chunk)
        if count > 0 {
            buffer.append(contentsOf: chunk[..<count])
            return true
        }
        if count == 0 { return false }
        let code = errno
        if code == EAGAIN || code == EWOULDBLOCK { throw RawHTTPError.timedOut }
        return false  // ECONNRESET: the server is gone
    }

    /// Reads one response; `nil` if the server closed before sending anything.
    /// `forHead` says the request was HEAD (no body whatever Content-Length says).
    public func readResponse(forHead: Bool = false) throws -> RawHTTPResponse? {
        while true {
            if let end = headEnd() {
                let response = try RawHTTPResponse(head: String(decoding: buffer[..<end], as: UTF8.self))
                let status = response.status
                let length =
                    (forHead || status < 200 || status == 204 || status == 304)
                    ? 0 : Int(response.header("Content-Length") ?? "0") ?? 0
                let total = end + 4 + length
                while buffer.count < total {
                    guard try fill() else { throw RawHTTPError.closedMidResponse(received: buffer.count) }
                }
                var complete = response
                complete.body = Array(buffer[(end + 4)..<total])
                buffer.removeFirst(total)
                if status == 100 { continue }
                return complete
            }
            guard try fill() else {
                if buffer.isEmpty { return nil }
                throw RawHTTPError.closedMidResponse(received: buffer.count)
            }
        }
    }

    /// Every byte the server sends until it closes, those already read but not yet taken
    /// by `readResponse` first: what follows a response, which should be nothing.
    public func readUntilClosed() throws -> [UInt8] {
        while try fill() {}
        defer { buffer.removeAll() }
        return buffer
    }

    /// True if the server closes the connection within `seconds` (end of stream or reset),
    /// false if it stays open. Bytes that arrive meanwhile are kept for `readResponse`.
    public func waitForClose(seconds: Double = 3) -> Bool {
        setTimeout(seconds)
        defer { setTimeout(5) }
        while true {
            do {
                guard try fill() else { return true }
            } catch {
                return false
            }
        }
    }

    private func headEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 0...(buffer.count - 4)
        where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
            return index
        }
        return nil
    }
}

extension RawHTTPConnection {
    /// Closes with a reset (`SO_LINGER` 0) instead of an orderly end: a peer vanishing.
    public func reset() {
        var option = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fdForExtensions, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
        close()
    }

    /// Our side's port: how the server under test tells this connection from others.
    public var localPort: Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fdForExtensions, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Shrinks our receive buffer, so a client that does not read stalls the server sooner.
    public func setReceiveBuffer(bytes: Int32) {
        var size = bytes
        setsockopt(fdForExtensions, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Reads and throws away everything until the server closes (`closed`) or `seconds`
    /// pass without a byte; says how many bytes came.
    public func drainUntilClosed(seconds: Double) -> (closed: Bool, bytes: Int) {
        setTimeout(seconds)
        var chunk = [UInt8](repeating: 0, count: 65536)
        var total = 0
        while true {
            let count = BlockingSocket.receive(fdForExtensions, into: &chunk)
            if count > 0 {
                total += count
                continue
            }
            if count == 0 { return (true, total) }
            return (errno != EAGAIN && errno != EWOULDBLOCK, total)
        }
    }
}
