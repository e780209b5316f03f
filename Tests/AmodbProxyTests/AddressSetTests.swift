import Glibc
import Testing

@testable import AmodbProxy

/// The exemption check reads a peer's IPv4 address by hand on every request; it must
/// read exactly what `inet_pton` reads.
struct AddressSetTests {
    @Test(
        "Dotted quads are read as inet_pton reads them",
        arguments: [
            "127.0.0.1", "0.0.0.0", "255.255.255.255", "10.0.0.255", "192.0.2.7", "1.2.3.4",
            "256.1.1.1", "1.2.3.256", "01.2.3.4", "1.2.3.04", "1.2.3.0", "1.2.3", "1.2.3.4.5", "1..2.3", ".1.2.3",
            " 1.2.3.4", "1.2.3.4 ", "", "a.b.c.d", "1.2.3.4x", "::1", "::ffff:127.0.0.1", "1234.1.1.1", "1.2.3.-4",
            "1.2.3.", "1.2.3.4.", "0.0.0.00",
        ])
    func readsDottedQuadsAsInetPton(text: String) {
        var address = in_addr()
        let expected: [UInt8]? =
            inet_pton(AF_INET, text, &address) == 1 ? withUnsafeBytes(of: address) { Array($0) } : nil
        let read = AddressSet.dottedQuad(text).map { [$0.0, $0.1, $0.2, $0.3] }
        #expect(read == expected)
    }

    @Test(
        "Loopback is exempt and other peers are not",
        arguments: [
            ("127.0.0.1", true), ("127.255.0.9", true), ("::1", true), ("::ffff:127.0.0.1", true),
            ("10.0.0.1", false), ("128.0.0.1", false), ("::2", false), ("garbage", false),
        ])
    func loopbackIsExempt(address: String, exempt: Bool) throws {
        let set = AddressSet(networks: ["127.0.0.0/8", "::1"].compactMap(TrustedProxies.Network.init))
        #expect(set.contains(address) == exempt)
    }

    @Test("A dotted quad matches a range as its bytes do, at every prefix length", arguments: 0...32)
    func aDottedQuadMatchesAsItsBytesDo(prefix: Int) throws {
        let addresses: [(UInt8, UInt8, UInt8, UInt8)] = [
            (192, 0, 2, 7), (192, 0, 2, 255), (192, 0, 3, 7), (10, 0, 0, 1), (0, 0, 0, 0), (255, 255, 255, 255),
        ]
        for network in ["192.0.2.7", "192.0.2.0", "10.0.0.0", "255.255.255.255"] {
            let range = try #require(TrustedProxies.Network("\(network)/\(prefix)"))
            for v4 in addresses {
                #expect(range.contains(v4) == range.contains([v4.0, v4.1, v4.2, v4.3]), "\(network)/\(prefix) \(v4)")
            }
        }
        let v6 = try #require(TrustedProxies.Network("::/\(min(prefix, 128))"))
        #expect(!v6.contains((0, 0, 0, 0)))
    }

    @Test(
        "Address literals are read to the bytes inet_pton writes",
        arguments: [
            "127.0.0.1", "192.0.2.7", "255.255.255.255", "::1", "fd00::1:2", "2001:db8::ff00:42:8329",
            "::ffff:10.1.2.3", "bad", "1.2.3",
        ])
    func addressLiteralsAreReadAsInetPtonWritesThem(text: String) {
        var v4 = in_addr()
        var v6 = in6_addr()
        let expected: [UInt8]?
        if inet_pton(AF_INET, text, &v4) == 1 {
            expected = withUnsafeBytes(of: v4) { Array($0) }
        } else if inet_pton(AF_INET6, text, &v6) == 1 {
            let bytes = withUnsafeBytes(of: v6) { Array($0) }
            expected = bytes.starts(with: Array(repeating: 0, count: 10) + [0xFF, 0xFF]) ? Array(bytes[12...]) : bytes
        } else {
            expected = nil
        }
        #expect(TrustedProxies.addressBytes(text) == expected)
    }
}
