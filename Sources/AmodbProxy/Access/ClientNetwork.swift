#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The network a client's address is counted as, wherever the proxy counts an address (the
/// per-address rate limit, the share of the calls for misses, the refused credentials'
/// bucket, App Attest's requests): an IPv4 address alone, an IPv6 address by its first
/// `ipv6Prefix` bits (`AMODB_IPV6_PREFIX`, 64 by default).
///
/// An IPv6 host or phone is given a whole /64 (SLAAC, RFC 7421; a home or an office often a
/// /56 or a /48), and picks any address in it: keyed by the whole address, one device would
/// be 2⁶⁴ clients, each with its own limit. Keyed by the prefix, the neighbours of a /64
/// are one client, as the users of one IPv4 address behind a NAT are.
struct ClientNetwork: Sendable, Equatable {
    /// The prefixes an operator may choose: a /32 is a provider's allocation, a /128 one address.
    static let prefixes: ClosedRange<Int> = 32...128
    static let defaultPrefix = 64

    /// The leading bits of an IPv6 address that name its client.
    let ipv6Prefix: Int

    init(ipv6Prefix: Int = Self.defaultPrefix) {
        precondition(Self.prefixes.contains(ipv6Prefix), "an IPv6 prefix of /32 to /128")
        self.ipv6Prefix = ipv6Prefix
    }

    /// The key of `address`'s network: an IPv4 address as it is (an IPv4-mapped IPv6 address
    /// as its IPv4 address), an IPv6 address as its prefix in canonical form
    /// (`2001:db8:1:2::/64`), whichever way it was written. Anything else (not an address)
    /// is its own key.
    func key(of address: String) -> String {
        // Most peers are IPv4 as the kernel writes it: no colon, no parse.
        guard address.utf8.contains(UInt8(ascii: ":")) else { return address }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, address, &v6) == 1 else { return address }
        let mapped = withUnsafeBytes(of: &v6) { bytes in
            bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
        }
        if mapped {
            return withUnsafeBytes(of: &v6) { bytes in bytes[12...].map { String($0) }.joined(separator: ".") }
        }
        withUnsafeMutableBytes(of: &v6) { bytes in
            for index in 0..<16 {
                let kept = min(max(ipv6Prefix - index * 8, 0), 8)
                bytes[index] &= kept == 8 ? 0xFF : ~(0xFF >> UInt8(kept))
            }
        }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &v6, &text, socklen_t(text.count)) != nil else { return address }
        let prefix = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return ipv6Prefix == 128 ? prefix : prefix + "/" + String(ipv6Prefix)
    }
}
