import AmodbHTTP
@testable import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

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
        #expect(proxies.clientAddress(peer: "10.0.0.2", forwardedFor: ["1.1.1.1, 198.51.100.1, 10.0.0.3"]) == "198.51.100.1")
        #expect(proxies.clientAddress(peer: "10.0.0.2", forwardedFor: ["garbage"]) == "10.0.0.2")
        #expect(proxies.clientAddress(peer: "10.0.0.2", forwardedFor: []) == "10.0.0.2")
        // Only a trusted peer's header is worth reading; with no trusted network, none is.
        #expect(proxies.mayForward("10.0.0.2"))
        #expect(!proxies.mayForward("203.0.113.9"))
        #expect(!TrustedProxies(networks: []).mayForward("10.0.0.2"))
    }
}

struct ClientTokensTests {
    @Test func acceptsOnlyABearerTokenItKnows() {
        let key = Secret("the-amodb-key")
        let tokens = ClientTokens(tokens: [Secret("alpha"), Secret("beta")], file: nil, amodbKey: key, logger: ProxyLogger(sink: { _ in }))
        let identifier = TokenIdentifier(amodbKey: key)
        #expect(tokens.authenticate("Bearer alpha") == identifier.identity(of: Secret("alpha")))
        #expect(tokens.authenticate("bearer beta") == identifier.identity(of: Secret("beta")))
        #expect(tokens.authenticate("Bearer gamma") == nil)
        #expect(tokens.authenticate("Bearer alph") == nil)
        #expect(tokens.authenticate("Bearer alphaa") == nil)
        #expect(tokens.authenticate("Basic YWxwaGE=") == nil)
        #expect(tokens.authenticate("Bearer ") == nil)
        #expect(tokens.authenticate(nil) == nil)
    }

    @Test func namesATokenTheSameWhateverItsPlaceInTheList() {
        let key = Secret("the-amodb-key")
        let logger = ProxyLogger(sink: { _ in })
        let both = ClientTokens(tokens: [Secret("first-token"), Secret("second-token")], file: nil, amodbKey: key, logger: logger)
        let second = ClientTokens(tokens: [Secret("second-token")], file: nil, amodbKey: key, logger: logger)
        #expect(both.authenticate("Bearer second-token") == second.authenticate("Bearer second-token"))
        #expect(both.authenticate("Bearer first-token") != both.authenticate("Bearer second-token"))
    }
}

@Suite(.timeLimit(.minutes(1)))
struct ClientRateLimiterTests {
    @Test func allowsABurstThenTheRate() {
        let limiter = ClientRateLimiter(perMinute: 60, burst: 3)
        #expect(limiter.take("a", now: 0) == nil)
        #expect(limiter.take("a", now: 0) == nil)
        #expect(limiter.take("a", now: 0) == nil)
        let wait = limiter.take("a", now: 0)
        #expect(wait != nil && abs(wait! - 1) < 0.001)
        #expect(limiter.take("b", now: 0) == nil, "another client has its own bucket")
        #expect(limiter.take("a", now: 1.01) == nil, "one token back after a second at 60/min")
    }

    /// The floods run on a thread of their own: seconds of CPU on the concurrency pool
    /// would starve the suites that serve sockets meanwhile.
    @Test(arguments: [(600, 120, 0.0, 2_000_000), (600, 120, 0.001, 100_000), (1, 10_000_000, 0.0, 100_000)])
    func aFloodOfDistinctClientsStaysWithinTheCap(_ perMinute: Int, _ burst: Int, _ step: Double, _ clients: Int) async throws {
        let limiter = ClientRateLimiter(perMinute: perMinute, burst: burst)
        let highest = try await offloaded {
            var now = 0.0
            var highest = 0
            for index in 0..<clients {
                _ = limiter.take(String(index), now: now)   // spoofed X-Forwarded-For addresses, each new
                now += step
                if index % 10_000 == 0 {
                    highest = max(highest, limiter.bucketCount)
                    if highest > limiter.capacity { break }
                }
            }
            return max(highest, limiter.bucketCount)
        }
        #expect(highest <= limiter.capacity)
        #expect(highest > limiter.capacity / 2, "the cap is used, not a table cleared at every turn")
    }

    @Test func aClientWhoseBucketWasSweptGetsNoFreshBurst() async throws {
        let limiter = ClientRateLimiter(perMinute: 1, burst: 5, capacity: 1024)
        for _ in 0..<5 { #expect(limiter.take("address:greedy", now: 0) == nil) }
        #expect(limiter.take("address:greedy", now: 0) != nil)
        // A flood of new keys, each owing less than the greedy client, sweeps the table many times.
        try await offloaded {
            for index in 0..<100_000 {
                for _ in 0..<(index % 3 == 0 ? 3 : 1) { _ = limiter.take("address:flood-\(index)", now: 1) }
            }
        }
        #expect(limiter.bucketCount <= 1024)
        let wait = limiter.take("address:greedy", now: 2)
        #expect(wait != nil && wait! > 50, "still owes what it owed before the sweep")
        for index in 0..<100 { #expect(limiter.take("address:newcomer-\(index)", now: 2) == nil, "a newcomer starts with a full burst") }
    }
}

struct CORSPolicyTests {
    @Test(arguments: ["https://app.example.com", "https://evil.example"])
    func aPreflightOnAnAPIRouteVariesOnOriginOnce(_ origin: String) {
        let policy = CORSPolicy(origins: ["https://app.example.com"])
        var preflight = policy.preflight(origin: origin)
        policy.decorate(&preflight, origin: origin)   // as the responder finishes every API answer
        #expect(preflight.headers.values("Vary") == ["Origin"])
    }

    @Test func anAnswerThatAlreadyVariesKeepsItsVaryAndGainsOrigin() {
        let policy = CORSPolicy(origins: ["https://app.example.com"])
        var response = HTTPResponse(status: 200, headers: HTTPHeaders([("Vary", "Accept-Encoding")]))
        policy.decorate(&response, origin: "https://app.example.com")
        policy.decorate(&response, origin: "https://app.example.com")
        #expect(response.headers.values("Vary") == ["Accept-Encoding", "Origin"])
    }

    @Test func aWildcardDoesNotVary() {
        var response = CORSPolicy(origins: ["*"]).preflight(origin: "https://anyone.example")
        CORSPolicy(origins: ["*"]).decorate(&response, origin: "https://anyone.example")
        #expect(response.headers.values("Vary").isEmpty)
    }
}
