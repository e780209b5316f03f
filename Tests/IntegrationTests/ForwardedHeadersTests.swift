import AmodbProxy
import AmodbSandbox
import AmodbTestSupport
import Foundation
import Testing

/// A set of forwarding headers a TLS terminator (or someone posing as one) sends.
struct ForwardedHeaderSet: Sendable, CustomTestStringConvertible {
    /// What the set is, as the test report shows it.
    let name: String
    /// The header fields sent with the request.
    let headers: [String: String]

    /// A named set of header fields.
    init(_ name: String, _ headers: [String: String]) {
        self.name = name
        self.headers = headers
    }

    /// The name, for the test report.
    var testDescription: String { name }

    /// Pieces of the values below that no answer may contain.
    static let markers = [
        "evil.example", "movies-proxy.example.com", "198.51.100.", "203.0.113.", "2001:db8", "/3/movie/551", "tv/day",
    ]

    /// What Caddy, load balancers and ingresses send, and what an attacker would try
    /// (cache poisoning through `X-Forwarded-Host`, target overrides, address hints).
    static let all: [ForwardedHeaderSet] = [
        .init(
            "X-Forwarded-Proto, -Host and -For as Caddy sends them",
            [
                "X-Forwarded-Proto": "https", "X-Forwarded-Host": "movies-proxy.example.com",
                "X-Forwarded-For": "198.51.100.7",
            ]),
        .init(
            "a forged host, scheme, port and prefix",
            [
                "X-Forwarded-Proto": "http", "X-Forwarded-Host": "evil.example", "X-Forwarded-Port": "8443",
                "X-Forwarded-Prefix": "/evil", "X-Forwarded-Server": "evil.example",
            ]),
        .init("RFC 7239 Forwarded", ["Forwarded": "for=198.51.100.7;proto=http;host=evil.example;by=203.0.113.1"]),
        .init(
            "Forwarded with an IPv6 node, a port and an unknown hop",
            ["Forwarded": #"for="[2001:db8:cafe::17]:4711", for=unknown"#]),
        .init("malformed Forwarded", ["Forwarded": #"for="[2001:db8::1;;;host==,,proto"#]),
        .init(
            "request-target and method overrides",
            [
                "X-Original-URL": "/3/movie/551", "X-Rewrite-URL": "/3/trending/tv/day",
                "X-HTTP-Method-Override": "DELETE",
            ]),
        .init(
            "client-address hints",
            ["X-Real-IP": "203.0.113.9", "True-Client-IP": "203.0.113.9", "CF-Connecting-IP": "203.0.113.9"]),
    ]
}

/// Which address the access log (and so the per-client rate limit) takes for a request.
struct ClientAddressCase: Sendable, CustomTestStringConvertible {
    /// What the row shows, as the test report says it.
    let name: String
    /// `AMODB_TRUSTED_PROXIES`; the tests' peer is always 127.0.0.1.
    let trusted: [String]
    /// The header fields sent with the request.
    let headers: [String: String]
    /// The `client` the access log must show.
    let client: String

    /// The name, for the test report.
    var testDescription: String { name }

    /// Who may name the client, with what, and the address that wins.
    static let all: [ClientAddressCase] = [
        .init(
            name: "no trusted proxies: X-Forwarded-For is ignored",
            trusted: [], headers: ["X-Forwarded-For": "198.51.100.7"], client: "127.0.0.1"),
        .init(
            name: "an untrusted peer: X-Forwarded-For is ignored",
            trusted: ["192.0.2.0/24"], headers: ["X-Forwarded-For": "198.51.100.7"], client: "127.0.0.1"),
        .init(
            name: "an untrusted peer: Forwarded is ignored",
            trusted: ["192.0.2.0/24"], headers: ["Forwarded": "for=198.51.100.7"], client: "127.0.0.1"),
        .init(
            name: "an untrusted peer: X-Real-IP is ignored",
            trusted: ["192.0.2.0/24"], headers: ["X-Real-IP": "198.51.100.7"], client: "127.0.0.1"),
        .init(
            name: "a trusted peer: the X-Forwarded-For client",
            trusted: ["127.0.0.1"], headers: ["X-Forwarded-For": "198.51.100.7"], client: "198.51.100.7"),
        .init(
            name: "a trusted peer: the right-most X-Forwarded-For entry, not a prepended one",
            trusted: ["127.0.0.1"], headers: ["X-Forwarded-For": "203.0.113.9, 198.51.100.7"], client: "198.51.100.7"),
        .init(
            name: "a trusted peer: an IPv6 X-Forwarded-For client",
            trusted: ["127.0.0.1"], headers: ["X-Forwarded-For": "2001:db8::7"], client: "2001:db8::7"),
        // Azure Application Gateway appends the client's port to its entry.
        .init(
            name: "a trusted peer: an IPv4 entry with a port",
            trusted: ["127.0.0.1"], headers: ["X-Forwarded-For": "198.51.100.7:51234"], client: "198.51.100.7"),
        .init(
            name: "a trusted peer: a bracketed IPv6 entry with a port",
            trusted: ["127.0.0.1"], headers: ["X-Forwarded-For": "[2001:db8::7]:51234"], client: "2001:db8::7"),
        .init(
            name: "a trusted peer: an entry with a port out of range is garbage",
            trusted: ["127.0.0.1"], headers: ["X-Forwarded-For": "198.51.100.7:65536"], client: "127.0.0.1"),
        .init(
            name: "a trusted peer: an unclosed bracket is garbage",
            trusted: ["127.0.0.1"], headers: ["X-Forwarded-For": "[2001:db8::7:51234"], client: "127.0.0.1"),
        .init(
            name: "a trusted peer: Forwarded alone is not believed",
            trusted: ["127.0.0.1"], headers: ["Forwarded": "for=198.51.100.7"], client: "127.0.0.1"),
        // Caddy overwrites X-Forwarded-For but passes a client's Forwarded through untouched.
        .init(
            name: "a trusted peer: a Forwarded passed through does not override X-Forwarded-For",
            trusted: ["127.0.0.1"], headers: ["X-Forwarded-For": "198.51.100.7", "Forwarded": "for=203.0.113.9"],
            client: "198.51.100.7"),
        .init(
            name: "a trusted peer: X-Real-IP is not believed",
            trusted: ["127.0.0.1"], headers: ["X-Real-IP": "198.51.100.7"], client: "127.0.0.1"),
    ]
}

/// Forwarding headers from a TLS terminator in front (`X-Forwarded-*`, RFC 7239
/// `Forwarded`): the proxy builds no absolute URL, so they never change an answer or
/// the shared cache entry, and only `X-Forwarded-For` from a trusted peer names the client.
@Suite(.timeLimit(.minutes(1)))
struct ForwardedHeadersTests {
    @Test(arguments: ForwardedHeaderSet.all, [true, false])
    func forwardingHeadersChangeNeitherTheAnswerNorTheSharedEntry(
        _ set: ForwardedHeaderSet, fromTrustedPeer trusted: Bool
    ) async throws {
        let setup = try SandboxedProxy { $0.trustedProxies = trusted ? ["127.0.0.1"] : ["192.0.2.0/24"] }
        try await withServer(setup) { setup in
            // The forwarded request fills the entry; a plain one is then answered from it.
            let forwarded = try await setup.harness.get("/3/movie/550", headers: set.headers)
            let plain = try await setup.harness.get("/3/movie/550")

            #expect(forwarded.status == 200)
            #expect(forwarded.body == plain.body)
            #expect(forwarded.header("ETag") == plain.header("ETag"))
            #expect(plain.header("Cache-Status")?.contains("hit") == true, "one entry, not one per forwarded host")
            #expect(setup.sandbox.totalRequestCount == 1)
            #expect(
                Set(forwarded.headers.map { $0.name.lowercased() }) == Set(plain.headers.map { $0.name.lowercased() }))
            for marker in ForwardedHeaderSet.markers {
                #expect(!forwarded.headers.contains { $0.value.contains(marker) }, "a header echoes \(marker)")
                #expect(!forwarded.text.contains(marker), "the body echoes \(marker)")
            }

            // Upstream sees the route that was asked for, and none of the client's forwarding headers.
            let upstream = try #require(setup.sandbox.receivedRequests.first)
            #expect(upstream.path == "/3/movie/550")
            #expect(upstream.method == "GET")
            for name in set.headers.keys { #expect(upstream.headers[name] == nil, "\(name) was forwarded to amodb") }
        }
    }

    @Test(arguments: ClientAddressCase.all)
    func theClientAddressComesFromXForwardedForOfATrustedPeerOnly(_ row: ClientAddressCase) async throws {
        let setup = try SandboxedProxy { $0.trustedProxies = row.trusted }
        try await withServer(setup) { setup in
            #expect(try await setup.harness.get("/3/movie/550", headers: row.headers).status == 200)
            #expect(await eventually { setup.accessLog.all.count == 1 })
            let line = try #require(setup.accessLog.all.first)
            #expect(line.contains(#""client":"\#(row.client)""#), "\(line)")
        }
    }

    @Test func corsFollowsTheOriginAloneNotTheForwardedHostOrScheme() async throws {
        let setup = try SandboxedProxy {
            $0.trustedProxies = ["127.0.0.1"]
            $0.corsOrigins = ["https://app.example.com"]
        }
        try await withServer(setup) { setup in
            // A forwarded host equal to the allowed origin's does not make another origin allowed.
            let preflight = try await setup.harness.get(
                "/3/movie/550",
                headers: [
                    "Origin": "https://evil.example", "Access-Control-Request-Method": "GET",
                    "X-Forwarded-Host": "app.example.com", "X-Forwarded-Proto": "https",
                ], method: "OPTIONS")
            #expect(preflight.status == 403)
            #expect(preflight.header("Access-Control-Allow-Origin") == nil)

            let actual = try await setup.harness.get(
                "/3/movie/550",
                headers: [
                    "Origin": "https://app.example.com", "X-Forwarded-Host": "evil.example",
                    "X-Forwarded-Proto": "http",
                ])
            #expect(actual.status == 200)
            #expect(actual.header("Access-Control-Allow-Origin") == "https://app.example.com")
        }
    }
}
