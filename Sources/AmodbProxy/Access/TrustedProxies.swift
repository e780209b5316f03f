import Glibc

/// Which peers may tell us the client's address in `X-Forwarded-For` (a load balancer,
/// an ingress). From anyone else the header is ignored: it is trivially forged.
struct TrustedProxies: Sendable {
    /// An address range: family bytes and prefix length.
    struct Network: Sendable, Equatable {
        let bytes: [UInt8]
        let prefix: Int

        /// `10.0.0.0/8`, `192.168.1.7`, `::1`, `fd00::/8`; `nil` if malformed.
        init?(_ text: some StringProtocol) {
            let parts = text.split(separator: "/", maxSplits: 1)
            guard let first = parts.first, let bytes = TrustedProxies.addressBytes(String(first)) else { return nil }
            let maxPrefix = bytes.count * 8
            if parts.count == 2 {
                guard let prefix = Int(parts[1]), (0...maxPrefix).contains(prefix) else { return nil }
                self.prefix = prefix
            } else {
                self.prefix = maxPrefix
            }
            self.bytes = bytes
        }

        /// Whether an IPv4 address, given as its four bytes in order, is in the range: compared
        /// as one word, with no allocation (asked on every request).
        func contains(_ v4: (UInt8, UInt8, UInt8, UInt8)) -> Bool {
            guard bytes.count == 4 else { return false }
            let address = UInt32(v4.0) << 24 | UInt32(v4.1) << 16 | UInt32(v4.2) << 8 | UInt32(v4.3)
            let network = bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            let mask = UInt32.max << (32 - prefix)  // a smart shift: a /0 masks every bit away
            return address & mask == network & mask
        }

        /// Whether an address, given as its bytes (4 for IPv4, 16 for IPv6), is in the range.
        func contains(_ address: some Collection<UInt8>) -> Bool {
            guard address.count == bytes.count else { return false }
            var remaining = prefix
            for (a, b) in zip(address, bytes) where remaining > 0 {
                let bits = min(8, remaining)
                let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
                if a & mask != b & mask { return false }
                remaining -= bits
            }
            return true
        }
    }

    let networks: [Network]

    init(networks: [Network]) {
        self.networks = networks
    }

    /// Whether `peer` may name the client in `X-Forwarded-For`: worth reading the header
    /// for (most proxies trust no peer, and then no request's header is looked at).
    func mayForward(_ peer: String) -> Bool {
        !networks.isEmpty && isTrusted(peer)
    }

    /// The client's address: the peer, or, when the peer is trusted, the right-most
    /// address in `X-Forwarded-For` that is not itself a trusted proxy.
    func clientAddress(peer: String, forwardedFor: [String]) -> String {
        guard mayForward(peer) else { return peer }
        guard !forwardedFor.isEmpty else { return peer }
        let hops = forwardedFor.flatMap { $0.split(separator: ",") }.map { Self.hopAddress($0.trimmingSpaces()) }
        for hop in hops.reversed() {
            guard let hop, Self.addressBytes(hop) != nil else { return peer }  // garbage: trust nothing in it
            if !isTrusted(hop) { return hop }
        }
        return hops.first.flatMap { $0 } ?? peer
    }

    /// The address in one `X-Forwarded-For` entry, without the client port that some load
    /// balancers append (Azure Application Gateway: `203.0.113.9:51234`,
    /// `[2001:db8::1]:51234`); a bare IPv6 address keeps its colons. `nil` if malformed.
    static func hopAddress(_ hop: Substring) -> String? {
        if hop.first == "[" {
            guard let close = hop.firstIndex(of: "]") else { return nil }
            let rest = hop[hop.index(after: close)...]
            guard rest.isEmpty || (rest.first == ":" && UInt16(rest.dropFirst()) != nil) else { return nil }
            return String(hop[hop.index(after: hop.startIndex)..<close])
        }
        let colons = hop.split(separator: ":", omittingEmptySubsequences: false)
        if colons.count == 2, UInt16(colons[1]) != nil { return String(colons[0]) }
        return String(hop)
    }

    func isTrusted(_ address: String) -> Bool {
        AddressSet(networks: networks).contains(address)
    }

    /// The bytes of an IPv4 or IPv6 literal (an IPv4-mapped IPv6 address as IPv4).
    static func addressBytes(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            // `s_addr` holds the address in network order: its first byte is the highest.
            let word = UInt32(bigEndian: v4.s_addr)
            return [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: word >> $0) }
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            let b = v6.__in6_u.__u6_addr8
            let bytes = [b.0, b.1, b.2, b.3, b.4, b.5, b.6, b.7, b.8, b.9, b.10, b.11, b.12, b.13, b.14, b.15]
            if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
                return Array(bytes[12...])
            }
            return bytes
        }
        return nil
    }
}

/// A set of address ranges (`AMODB_RATE_LIMIT_EXEMPT`).
struct AddressSet: Sendable {
    let networks: [TrustedProxies.Network]

    /// Whether the address falls in one of the ranges. Asked on every request: a peer's
    /// IPv4 address as the kernel writes it is read by hand, with no allocation.
    func contains(_ address: String) -> Bool {
        if let v4 = Self.dottedQuad(address) {
            return networks.contains { $0.contains(v4) }
        }
        guard let bytes = TrustedProxies.addressBytes(address) else { return false }
        return networks.contains { $0.contains(bytes) }
    }
}

extension AddressSet {
    /// The four bytes of a canonical dotted-quad IPv4 address (`192.0.2.7`: four decimal
    /// parts 0…255 without leading zeros, as `inet_pton` reads them), or `nil` for
    /// anything else, which is left to `inet_pton`.
    static func dottedQuad(_ text: String) -> (UInt8, UInt8, UInt8, UInt8)? {
        // One pass over the bytes in place, into one word (this runs for every request).
        var text = text
        return text.withUTF8 { bytes in
            var address: UInt32 = 0
            var value: UInt32 = 0
            var digits = 0
            var dots = 0
            for byte in bytes {
                if byte == UInt8(ascii: ".") {
                    guard digits > 0, dots < 3 else { return nil }
                    address = address << 8 | value
                    value = 0
                    digits = 0
                    dots += 1
                } else {
                    let digit = UInt32(byte &- UInt8(ascii: "0"))
                    guard digit <= 9, digits < 3, !(digits == 1 && value == 0) else { return nil }
                    value = value * 10 + digit
                    guard value <= 255 else { return nil }
                    digits += 1
                }
            }
            guard dots == 3, digits > 0 else { return nil }
            address = address << 8 | value
            return (
                UInt8(truncatingIfNeeded: address >> 24), UInt8(truncatingIfNeeded: address >> 16),
                UInt8(truncatingIfNeeded: address >> 8), UInt8(truncatingIfNeeded: address)
            )
        }
    }
}
