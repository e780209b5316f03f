#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A TCP socket on 127.0.0.1, port 0, for transport failures URLSession must meet for real.
///
/// `listening: true` accepts connections (the kernel completes the handshake) but never
/// answers, so a request times out; `listening: false` is bound but refuses connections,
/// so a request fails to connect. Either way the port stays ours until `close()`.
final class LocalSocket: Sendable {
    /// The port the kernel chose.
    let port: UInt16
    private let descriptor: Int32

    init(listening: Bool) throws {
        #if canImport(Glibc)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw SocketError(call: "socket", errno: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        #if canImport(Darwin)
            address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        let length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else {
            close(fd)
            throw SocketError(call: "bind", errno: errno)
        }
        if listening, listen(fd, 16) != 0 {
            close(fd)
            throw SocketError(call: "listen", errno: errno)
        }
        var actual = sockaddr_in()
        var actualLength = length
        let named = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &actualLength) }
        }
        guard named == 0 else {
            close(fd)
            throw SocketError(call: "getsockname", errno: errno)
        }
        descriptor = fd
        port = UInt16(bigEndian: actual.sin_port)
    }

    deinit {
        close(descriptor)
    }

    /// A failed socket call and its errno.
    struct SocketError: Error {
        let call: String
        let errno: Int32
    }
}
