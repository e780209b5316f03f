import AmodbProxy
import AmodbTestSupport
import Testing

/// CORS as browsers use it (the Fetch standard): the request headers TMDB client libraries
/// send make a preflight, which must allow the names it lists; and every answer to an
/// allowed origin, errors included, carries `Access-Control-Allow-Origin`, or the page
/// cannot read it and sees only "Failed to fetch".
@Suite(.timeLimit(.minutes(1)))
struct BrowserCORSTests {
    static let origin = "https://app.example.com"

    /// The `Access-Control-Request-Headers` a browser sends (lower case, sorted, no spaces)
    /// for tmdb-ts and its kin (`Content-Type: application/json` on a GET), a page that
    /// asks for `Cache-Control: no-cache`, one behind Firebase App Check, and all at once.
    static let requestedHeaders = [
        "authorization,content-type", "cache-control", "x-firebase-appcheck",
        "authorization,cache-control,content-type,if-none-match,x-firebase-appcheck",
    ]

    @Test("A preflight allows the request headers it names", arguments: requestedHeaders)
    func aPreflightAllowsTheHeadersItNames(requested: String) async throws {
        try await withServer(try SandboxedProxy { $0.corsOrigins = [Self.origin] }) { setup in
            let preflight = try await setup.harness.get(
                "/3/movie/550",
                headers: [
                    "Origin": Self.origin, "Access-Control-Request-Method": "GET",
                    "Access-Control-Request-Headers": requested,
                ], method: "OPTIONS")
            #expect(preflight.status == 204)
            #expect(preflight.header("Access-Control-Allow-Origin") == Self.origin)
            let allowed = Set(
                (preflight.header("Access-Control-Allow-Headers") ?? "").split(separator: ",").map {
                    $0.trimmingCharacters(in: .whitespaces).lowercased()
                })
            #expect(allowed.isSuperset(of: requested.split(separator: ",").map(String.init)), "\(allowed)")
            #expect(Int(preflight.header("Access-Control-Max-Age") ?? "") ?? 0 >= 600)
            #expect(
                preflight.headers.filter { $0.name.lowercased() == "vary" }.map(\.value) == [
                    "Origin, Access-Control-Request-Method, Access-Control-Request-Headers"
                ])
            #expect(preflight.header("Access-Control-Allow-Credentials") == nil)
            #expect(setup.sandbox.totalRequestCount == 0, "a preflight reaches nothing")
        }
    }

    /// Names that are no field names (RFC 9110 §5.6.2 tokens), or more of them than any
    /// browser sends, are not echoed back: the preflight fails, saying why.
    @Test(
        "A preflight naming malformed or too many headers is refused",
        arguments: [
            "content type", "x-a;b", "x-\u{e9}", String(repeating: "x-a,", count: 33) + "x-b",
            "x-" + String(repeating: "a", count: 1100),
        ])
    func aPreflightWithABadHeaderListIsRefused(requested: String) async throws {
        try await withServer(try SandboxedProxy { $0.corsOrigins = [Self.origin] }) { setup in
            let preflight = try await setup.harness.get(
                "/3/movie/550",
                headers: [
                    "Origin": Self.origin, "Access-Control-Request-Method": "GET",
                    "Access-Control-Request-Headers": requested,
                ], method: "OPTIONS")
            #expect(preflight.status == 400)
            #expect(preflight.header("Access-Control-Allow-Headers") == nil)
            #expect(preflight.text.contains("Access-Control-Request-Headers"))
        }
    }

    /// Empty list elements are allowed and ignored (RFC 9110 §5.6.1), and so is a list of none.
    @Test func aPreflightIgnoresEmptyElements() async throws {
        try await withServer(try SandboxedProxy { $0.corsOrigins = [Self.origin] }) { setup in
            let preflight = try await setup.harness.get(
                "/3/movie/550",
                headers: [
                    "Origin": Self.origin, "Access-Control-Request-Method": "GET",
                    "Access-Control-Request-Headers": " , content-type ,, ",
                ], method: "OPTIONS")
            #expect(preflight.status == 204)
            #expect(preflight.header("Access-Control-Allow-Headers") == "content-type")
        }
    }

    /// Every error the proxy makes for an allowed origin can be read by the page: the unserved
    /// path, the missing movie, a bad parameter, a missing token, a client over its rate, a
    /// method not allowed, and a path outside the API.
    @Test func everyErrorToAnAllowedOriginCarriesItsOrigin() async throws {
        let proxy = try SandboxedProxy(clock: ManualClock()) {
            $0.corsOrigins = [Self.origin]
            $0.clientTokens = [Secret("app")]
            $0.clientRateLimit = 1  // the clock stands still: no refill
            $0.clientBurst = 5  // the five GETs under /3 that pass the token check before the 429
        }
        try await withServer(proxy) { setup in
            let token = ["Authorization": "Bearer app"]
            let cases: [(target: String, headers: [String: String], method: String, status: Int)] = [
                ("/3/search/movie?query=x", token, "GET", 404),
                ("/3/movie/1", token, "GET", 404),
                ("/3/trending/movie/day?page=0", token, "GET", 400),
                ("/3/movie/550", [:], "GET", 401),
                ("/3/movie/550", token, "POST", 405),
                ("/search/movie", [:], "GET", 404),
                ("/3/configuration", token, "GET", 200),
                ("/3/movie/550", token, "GET", 200),
                ("/3/movie/550", token, "GET", 429),
            ]
            for step in cases {
                let answer = try await setup.harness.get(
                    step.target, headers: step.headers.merging(["Origin": Self.origin]) { $1 }, method: step.method)
                let what = "\(step.method) \(step.target)"
                #expect(answer.status == step.status, "\(what)")
                #expect(answer.header("Access-Control-Allow-Origin") == Self.origin, "\(what)")
                #expect(answer.header("Access-Control-Expose-Headers")?.contains("Retry-After") == true, "\(what)")
                // A page reads a 401's challenge (docs/signing-in.md's retry recipe).
                #expect(
                    answer.header("Access-Control-Expose-Headers")?.contains("WWW-Authenticate") == true, "\(what)")
                #expect(answer.headers.contains { $0.name.lowercased() == "vary" && $0.value == "Origin" }, "\(what)")
                #expect(answer.header("Access-Control-Allow-Credentials") == nil, "\(what)")
            }
        }
    }

    /// The errors made when amodb fails: 502, 503 (no call left in the window) and 504.
    @Test(arguments: [(500, 502), (504, 504)])
    func anUpstreamFailureToAnAllowedOriginCarriesItsOrigin(upstream: Int, expected: Int) async throws {
        let harness = try ProxyHarness(
            .live, configuration: ProxyHarness.configuration { $0.corsOrigins = [Self.origin] },
            fetcher: ScriptedUpstream(fallback: .status(upstream)), clock: ManualClock())
        try await withServer(harness) { harness in
            let answer = try await harness.get("/3/movie/550", headers: ["Origin": Self.origin])
            #expect(answer.status == expected)
            #expect(answer.header("Access-Control-Allow-Origin") == Self.origin)
        }
    }

    @Test func aBudgetRefusalToAnAllowedOriginCarriesItsOrigin() async throws {
        let harness = try ProxyHarness(
            .live,
            configuration: ProxyHarness.configuration {
                $0.corsOrigins = [Self.origin]
                $0.rateLimit = 1
                $0.missWait = 0
            },
            fetcher: ScriptedUpstream(fallback: .status(200, ScriptedUpstream.movieDetails)), clock: ManualClock())
        try await withServer(harness) { harness in
            _ = try await harness.get("/3/movie/550")
            let refused = try await harness.get("/3/movie/551", headers: ["Origin": Self.origin])
            #expect(refused.status == 503)
            #expect(refused.header("Retry-After") != nil)
            #expect(refused.header("Access-Control-Allow-Origin") == Self.origin)
        }
    }

    /// An origin not in the list is refused before anything is done for it: its preflight
    /// gets no CORS field, and any request a 403 it may read, which names the origin and
    /// the setting and holds nothing else; amodb is never asked for it.
    @Test func aDisallowedOriginIsRefusedWithAMessageItCanRead() async throws {
        try await withServer(try SandboxedProxy { $0.corsOrigins = [Self.origin] }) { setup in
            let other = "https://evil.example"
            let preflight = try await setup.harness.get(
                "/3/movie/550",
                headers: [
                    "Origin": other, "Access-Control-Request-Method": "GET",
                    "Access-Control-Request-Headers": "content-type",
                ], method: "OPTIONS")
            #expect(preflight.status == 403)
            #expect(preflight.text.contains("The origin https://evil.example may not call the proxy"))
            for field in preflight.headers where field.name.lowercased().hasPrefix("access-control-") {
                Issue.record("the refused preflight sends \(field.name)")
            }
            for target in ["/3/search/movie", "/3/movie/1", "/3/movie/550", "/3/trending/movie/day"] {
                let answer = try await setup.harness.get(target, headers: ["Origin": other])
                #expect(answer.status == 403, "\(target)")
                #expect(answer.text.contains("AMODB_CORS_ORIGINS"), "\(target)")
                #expect(answer.header("Access-Control-Allow-Origin") == other)
                #expect(answer.header("Access-Control-Expose-Headers") == nil, "the refusal alone is readable")
                #expect(answer.header("Vary")?.contains("Origin") == true)
                #expect(answer.header("Cache-Control") == "no-store")
            }
            #expect(setup.sandbox.totalRequestCount == 0, "a refused page spends nothing")
        }
    }

    /// With `*` the server's own refusals (a head it could not read) are readable too: their
    /// answer cannot depend on an `Origin` it never read.
    @Test func withAnyOriginTheServersOwnRefusalsAreReadable() async throws {
        try await withServer(try SandboxedProxy { $0.corsOrigins = ["*"] }) { setup in
            let (responses, _) = try await setup.harness.exchange(
                Array("GET /3/movie/550 HTTP/1.1\r\nHost: a\r\nBad Name: x\r\n\r\n".utf8), expecting: 1)
            let refused = try #require(responses.first)
            #expect(refused.status == 400)
            #expect(refused.header("Access-Control-Allow-Origin") == "*")
        }
    }
}
