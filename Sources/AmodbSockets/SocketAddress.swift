package import Glibc

/// An IPv4 or IPv6 socket address: parsed from a literal, read back from the kernel, or
/// copied from `getaddrinfo`.
package struct SocketAddress: Sendable {
    private var storage = sockaddr_storage()
    /// The address family, `AF_INET` or `AF_INET6`.
    package let family: Int32

    /// Parses an IP literal (`127.0.0.1`, `::1`, `0.0.0.0`); `nil` for anything else.
    package init?(host: String, port: Int) {
        guard (0...65535).contains(port) else { return nil }
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = in_port_t(UInt16(port).bigEndian)
            storage = Self.storage(holding: v4)
            family = AF_INET
            return
        }
        var v6 = sockaddr_in6()
        let literal = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if inet_pton(AF_INET6, literal, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = in_port_t(UInt16(port).bigEndian)
            storage = Self.storage(holding: v6)
            family = AF_INET6
            return
        }
        return nil
    }

    /// A `sockaddr_in` or `sockaddr_in6` in the room of any address.
    private static func storage<Address>(holding address: Address) -> sockaddr_storage {
        var storage = sockaddr_storage()
        withUnsafeMutableBytes(of: &storage) { raw in withUnsafeBytes(of: address) { raw.copyMemory(from: $0) } }
        return storage
    }

    package init(_ storage: sockaddr_storage) {
        self.storage = storage
        self.family = Int32(storage.ss_family)
    }

    /// Copies an address `getaddrinfo` returned; `nil` for a family other than IPv4 or IPv6.
    package init?(_ address: UnsafeMutablePointer<sockaddr>?, length: socklen_t) {
        guard let address, Int(length) <= MemoryLayout<sockaddr_storage>.size,
            Int32(address.pointee.sa_family) == AF_INET || Int32(address.pointee.sa_family) == AF_INET6
        else { return nil }
        withUnsafeMutableBytes(of: &storage) { raw in
            raw.copyMemory(from: UnsafeRawBufferPointer(start: address, count: Int(length)))
        }
        family = Int32(address.pointee.sa_family)
    }

    /// The size of the concrete address structure.
    package var length: socklen_t {
        socklen_t(family == AF_INET6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
    }

    /// The port, in host byte order.
    package var port: Int {
        withUnsafeBytes(of: storage) { raw in
            if family == AF_INET6 {
                Int(UInt16(bigEndian: raw.load(as: sockaddr_in6.self).sin6_port))
            } else {
                Int(UInt16(bigEndian: raw.load(as: sockaddr_in.self).sin_port))
            }
        }
    }

    /// The address as text, e.g. `127.0.0.1` or `::1`.
    package var host: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        withUnsafeBytes(of: storage) { raw in
            if family == AF_INET6 {
                var address = raw.load(as: sockaddr_in6.self).sin6_addr
                _ = inet_ntop(AF_INET6, &address, &text, socklen_t(text.count))
            } else if family == AF_INET {
                var address = raw.load(as: sockaddr_in.self).sin_addr
                _ = inet_ntop(AF_INET, &address, &text, socklen_t(text.count))
            }
        }
        let length = text.firstIndex(of: 0) ?? text.count
        return String(decoding: text[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Calls `body` with the address as a `sockaddr` pointer.
    package func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws(SyscallError) -> R)
        throws(SyscallError) -> R
    {
        var copy = storage
        let length = self.length
        return try withUnsafePointer(to: &copy) { (pointer) throws(SyscallError) -> R in
            try body(UnsafeRawPointer(pointer).assumingMemoryBound(to: sockaddr.self), length)
        }
    }
}
