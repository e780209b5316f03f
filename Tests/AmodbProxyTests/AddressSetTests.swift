@testable import AmodbProxy
import Glibc
import Testing

/// The exemption check reads a peer's IPv4 address by hand on every request; it must
/// read exactly what `inet_pton` reads.
struct AddressSetTests {
    @Test("Dotted quads are read as inet_pton reads them", arguments: [
        "127.0.0.1", "0.0.0.0", "255.255.255.255", "10.0.0.255", "192.0.2.7", "1.2.3.4",
        "256.1.1.1", "1.2.3.256", "01.2.3.4", "1.2.3.04", "1.2.3.0", "1.2.3", "1.2.3.4.5", "1..2.3", ".1.2.3",
        " 1.2.3.4", "1.2.3.4 ", "", "a.b.c.d", "1.2.3.4x", "::1", "::ffff:127.0.0.1", "1234.1.1.1", "1.2.3.-4", "1.2.3.", "1.2.3.4.", "0.0.0.00",
    ])
    func readsDottedQuadsAsInetPton(text: String) {
        var address = in_addr()
        let expected: [UInt8]? = inet_pton(AF_INET, text, &address) == 1 ? withUnsafeBytes(of: address) { Array($0) } : nil
        let read = AddressSet.dottedQuad(text).map { [$0.0, $0.1, $0.2, $0.3] }
        #expect(read == expected)
    }

    @Test("Loopback is exempt and other peers are not", arguments: [
        ("127.0.0.1", true), ("127.255.0.9", true), ("::1", true), ("::ffff:127.0.0.1", true),
        ("10.0.0.1", false), ("128.0.0.1", false), ("::2", false), ("garbage", false),
    ])
    func loopbackIsExempt(address: String, exempt: Bool) throws {
        let set = AddressSet(networks: ["127.0.0.0/8", "::1"].compactMap(TrustedProxies.Network.init))
        #expect(set.contains(address) == exempt)
    }
}
