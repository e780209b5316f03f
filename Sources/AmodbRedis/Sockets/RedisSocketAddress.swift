import Glibc

/// An IPv4 or IPv6 address to connect to: parsed from a literal, or copied from `getaddrinfo`.
struct RedisSocketAddress: Sendable {
    private var storage = sockaddr_storage()
    private let length: socklen_t

    /// The address family, `AF_INET` or `AF_INET6`.
    var family: Int32 { Int32(storage.ss_family) }

    /// Parses an IP literal (`127.0.0.1`, `::1`); `nil` for a host name.
    init?(literal host: String, port: Int) {
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
            withUnsafeMutableBytes(of: &storage) { raw in withUnsafeBytes(of: v4) { raw.copyMemory(from: $0) } }
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
            return
        }
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET6, host, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
            withUnsafeMutableBytes(of: &storage) { raw in withUnsafeBytes(of: v6) { raw.copyMemory(from: $0) } }
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
            return
        }
        return nil
    }

    /// Copies an address `getaddrinfo` returned; `nil` for a family other than IPv4 or IPv6.
    init?(_ address: UnsafeMutablePointer<sockaddr>?, length: socklen_t) {
        guard let address, Int(length) <= MemoryLayout<sockaddr_storage>.size,
              Int32(address.pointee.sa_family) == AF_INET || Int32(address.pointee.sa_family) == AF_INET6
        else { return nil }
        withUnsafeMutableBytes(of: &storage) { raw in raw.copyMemory(from: UnsafeRawBufferPointer(start: address, count: Int(length))) }
        self.length = length
    }

    /// Calls `body` with the address as a `sockaddr` pointer.
    func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        var copy = storage
        return withUnsafePointer(to: &copy) { body(UnsafeRawPointer($0).assumingMemoryBound(to: sockaddr.self), length) }
    }
}
