import AmodbModels
import AmodbTestSupport
import Testing

@testable import AmodbProxy

/// Every per-address count keys an IPv6 client by its network, not its address: a device
/// picks any address of its /64, and would otherwise be 2⁶⁴ clients.
@Suite(.timeLimit(.minutes(1)))
struct ClientNetworkTests {
    @Test func anIPv6AddressIsKeyedByItsPrefixWhicheverWayItIsWritten() {
        let network = ClientNetwork()
        #expect(network.key(of: "2001:db8:1:2:aaaa:bbbb:cccc:dddd") == "2001:db8:1:2::/64")
        #expect(network.key(of: "2001:0DB8:0001:0002::1") == "2001:db8:1:2::/64")
        #expect(network.key(of: "2001:db8:1:3::1") == "2001:db8:1:3::/64")
        #expect(ClientNetwork(ipv6Prefix: 56).key(of: "2001:db8:1:2ff::1") == "2001:db8:1:200::/56")
        #expect(ClientNetwork(ipv6Prefix: 48).key(of: "2001:db8:1:ffff::1") == "2001:db8:1::/48")
        #expect(ClientNetwork(ipv6Prefix: 60).key(of: "2001:db8:1:2f::1") == "2001:db8:1:20::/60")
        #expect(ClientNetwork(ipv6Prefix: 128).key(of: "2001:db8::1") == "2001:db8::1")
    }

    @Test func anIPv4AddressIsItselfWhicheverFamilyCarriesIt() {
        let network = ClientNetwork()
        #expect(network.key(of: "203.0.113.7") == "203.0.113.7")
        #expect(network.key(of: "::ffff:203.0.113.7") == "203.0.113.7", "an IPv4-mapped address is its IPv4 client")
        #expect(network.key(of: "not an address") == "not an address")
    }

    /// Clients told apart by a trusted `X-Forwarded-For` (the same keying as a peer's address).
    private static func settings(_ adjust: (inout ProxyConfiguration) -> Void = { _ in }) -> ProxyConfiguration {
        ProxyHarness.configuration {
            $0.rateLimit = 40
            $0.rateLimitExempt = []
            $0.trustedProxies = ["127.0.0.1"]
            adjust(&$0)
        }
    }

    /// 300 addresses of one /64 are one client: its rate limit stops them after the burst.
    @Test func theAddressesOfOneSlash64ShareOneRateLimit() async throws {
        let harness = try ProxyHarness(
            configuration: Self.settings {
                $0.clientRateLimit = 1
                $0.clientBurst = 10
            }, fetcher: ScriptedUpstream(fallback: .status(404, "{}")), clock: ManualClock())
        try await withServer(harness) { _ async throws in
            var statuses: [Int: Int] = [:]
            for host in 1...300 {
                let address = "2001:db8:77:1:\(String(host, radix: 16)):\(String(host * 7, radix: 16))::1"
                let status = try await harness.get("/3/movie/550", headers: ["X-Forwarded-For": address]).status
                statuses[status, default: 0] += 1
            }
            #expect(statuses == [404: 10, 429: 290])
            let neighbour = try await harness.get(
                "/3/movie/550", headers: ["X-Forwarded-For": "2001:db8:77:2::1"])
            #expect(neighbour.status == 404, "the next /64 is another client")
        }
    }

    /// The share of the calls for misses, and refused app tokens, count the /64 too; a
    /// narrower prefix makes a whole site one client, and /128 each address.
    @Test func theShareAndRefusedTokensCountTheNetworkAtItsPrefix() async throws {
        let fetcher = ScriptedUpstream(fallback: .status(404, "{}"))
        let harness = try ProxyHarness(
            configuration: Self.settings {
                $0.clientUpstreamShare = 0.125  // 5 calls a window at 40
                $0.ipv6Prefix = 56
            }, fetcher: fetcher, clock: ManualClock())
        try await withServer(harness) { _ async throws in
            for id in 1...5 {
                let address = "2001:db8:5:\(String(0x100 + id, radix: 16))::\(id)"  // five /64s of one /56
                #expect(try await harness.get("/3/movie/\(id)", headers: ["X-Forwarded-For": address]).status == 404)
            }
            let refused = try await harness.get("/3/movie/6", headers: ["X-Forwarded-For": "2001:db8:5:1ff::9"])
            #expect(refused.status == 503)
            #expect(refused.header("Cache-Status") == "amodb-proxy; fwd=miss; detail=client-share-spent")
            let otherSite = try await harness.get("/3/movie/7", headers: ["X-Forwarded-For": "2001:db8:5:200::1"])
            #expect(otherSite.status == 404)
            #expect(fetcher.calls.count == 6)
        }

        let tokens = try ProxyHarness(
            configuration: Self.settings {
                $0.clientTokens = [Secret("app-token")]
                $0.clientRateLimit = 1
                $0.clientBurst = 4
            }, fetcher: ScriptedUpstream(fallback: .status(404, "{}")), clock: ManualClock())
        try await withServer(tokens) { _ async throws in
            var statuses: [Int] = []
            for host in 1...8 {
                let headers = ["X-Forwarded-For": "2001:db8:9:9::\(host)", "Authorization": "Bearer wrong-\(host)"]
                statuses.append(try await tokens.get("/3/movie/550", headers: headers).status)
            }
            #expect(statuses == [401, 401, 401, 401, 429, 429, 429, 429])
        }

        let each = try ProxyHarness(
            configuration: Self.settings {
                $0.clientRateLimit = 1
                $0.clientBurst = 1
                $0.ipv6Prefix = 128
            }, fetcher: ScriptedUpstream(fallback: .status(404, "{}")), clock: ManualClock())
        try await withServer(each) { _ async throws in
            for host in 1...5 {
                let headers = ["X-Forwarded-For": "2001:db8:9:9::\(host)"]
                #expect(try await each.get("/3/movie/550", headers: headers).status == 404, "/128: each address")
            }
        }
    }
}
