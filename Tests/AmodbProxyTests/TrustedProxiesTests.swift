import AmodbTestSupport
import Foundation
import Testing

@testable import AmodbProxy

struct TrustedProxiesTests {
    @Test(arguments: [
        ("10.0.0.0/8", "10.1.2.3", true), ("10.0.0.0/8", "11.0.0.1", false), ("192.168.1.7", "192.168.1.7", true),
        ("192.168.1.7", "192.168.1.8", false), ("fd00::/8", "fd12::1", true), ("fd00::/8", "fe80::1", false),
        ("127.0.0.1", "::ffff:127.0.0.1", true), ("0.0.0.0/0", "8.8.8.8", true),
    ])
    func matchesAddressesAgainstNetworks(_ network: String, _ address: String, _ contained: Bool) throws {
        let proxies = TrustedProxies(networks: [try #require(TrustedProxies.Network(network))])
        #expect(proxies.isTrusted(address) == contained)
    }

    @Test(arguments: ["10.0.0.0/33", "not-an-ip", "1.2.3", "::1/129", ""])
    func refusesMalformedNetworks(_ text: String) {
        #expect(TrustedProxies.Network(text) == nil)
    }

    @Test func believesForwardedForOnlyFromATrustedPeer() throws {
        let proxies = TrustedProxies(networks: [try #require(TrustedProxies.Network("10.0.0.0/8"))])
        #expect(proxies.clientAddress(peer: "203.0.113.9", forwardedFor: ["198.51.100.1"]) == "203.0.113.9")
        #expect(proxies.clientAddress(peer: "10.0.0.2", forwardedFor: ["198.51.100.1"]) == "198.51.100.1")
        // The right-most address that is not one of ours: a client cannot prepend its way in.
        #expect(
            proxies.clientAddress(peer: "10.0.0.2", forwardedFor: ["1.1.1.1, 198.51.100.1, 10.0.0.3"]) == "198.51.100.1"
        )
        #expect(proxies.clientAddress(peer: "10.0.0.2", forwardedFor: ["garbage"]) == "10.0.0.2")
        #expect(proxies.clientAddress(peer: "10.0.0.2", forwardedFor: []) == "10.0.0.2")
        // Only a trusted peer's header is worth reading; with no trusted network, none is.
        #expect(proxies.mayForward("10.0.0.2"))
        #expect(!proxies.mayForward("203.0.113.9"))
        #expect(!TrustedProxies(networks: []).mayForward("10.0.0.2"))
    }
}
