import AmodbCrypto
import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

/// The sign-in provider's key set as the proxy holds it: fetched at start (the proxy serves
/// health checks without it, and tokens that need it wait with 503), refreshed on its
/// interval and on an unknown `kid` (at most once per 30 s), kept through outages, bounded,
/// and fetched without credentials or redirects.
///
/// Each wait polls until its condition holds, so its deadline only bounds a failing run:
/// 20 s, since the refresher runs at background priority and a loaded machine (the whole
/// suite in parallel) has kept it waiting more than 5 s.
@Suite(.timeLimit(.minutes(1)))
struct KeySetRefreshTests {
    @Test func theProxyStartsWithoutTheSetAndTokensThatNeedItWait() async throws {
        try await withServer(try UserTokenSetup(keySet: .down)) { setup throws in
            #expect(try await setup.harness.get("/healthz").status == 200)
            let ready = try await setup.harness.get("/readyz")
            #expect(ready.status == 503)
            #expect(ready.text.contains("no key set from AMODB_JWT_JWKS_URL yet"), "\(ready.text)")
            let waiting = try await setup.get(token: try setup.token())
            #expect(waiting.status == 503)
            #expect(waiting.header("Retry-After").flatMap(Int.init).map { (1...60).contains($0) } == true)
            #expect(waiting.text.contains("key set"))
            #expect(try await setup.get(token: try setup.token(kid: nil)).status == 200, "HS256 needs no key set")
            #expect(try await setup.harness.metrics().value("amodb_proxy_auth_total", ["result": "no_key_set"]) == 1)

            setup.keys.answer(.keySet(setup.provider.keySet()))
            #expect(try await awaitKeySet(setup), "retried within seconds while no set is held")
            #expect(try await setup.get(token: try setup.token()).status == 200)
            #expect(setup.proxy.sandbox.totalRequestCount == 1)
        }
    }

    @Test func anUnknownKidFetchesTheSetAtMostOnceEvery30Seconds() async throws {
        let clock = ManualClock(UserTokenSetup.now)
        try await withServer(try UserTokenSetup(clock: clock)) { setup throws in
            #expect(try await awaitKeySet(setup))
            #expect(setup.keys.requestCount == 1)
            // The provider rotates: a new key, published.
            var provider = setup.provider
            provider.keys["rsa-2"] = try SignInProvider.spareRSAKey(0)
            setup.keys.answer(.keySet(provider.keySet()))
            let rotated = try provider.token(
                kid: "rsa-2", claims: SignInProvider.claims(subject: "user-1", now: clock.now()))
            let first = try await setup.get(token: rotated)
            #expect(first.status == 401)
            #expect(first.text.contains("unknown kid") && first.text.contains("being fetched again"))
            #expect(
                try await eventually(within: 20) { try await setup.get(token: rotated).status == 200 },
                "picked up within seconds")
            #expect(setup.keys.requestCount == 2)

            // Made-up kids cost no fetch until 30 s have passed since the last.
            let refusedBefore = try await setup.harness.metrics().value(
                "amodb_proxy_auth_total", ["result": "unknown_kid"])
            provider.keys["made-up"] = try SignInProvider.spareRSAKey(1)
            let madeUp = try provider.token(
                kid: "made-up", claims: SignInProvider.claims(subject: "user-2", now: clock.now()))
            for _ in 0..<5 { #expect(try await setup.get(token: madeUp).status == 401) }
            #expect(setup.keys.requestCount == 2)
            clock.advance(by: 31)
            #expect(try await setup.get(token: madeUp).status == 401)
            #expect(await eventually(within: 20) { setup.keys.requestCount == 3 })
            #expect(
                try await setup.harness.metrics().value("amodb_proxy_auth_total", ["result": "unknown_kid"])
                    == refusedBefore + 6)
        }
    }

    @Test func theSetIsRefreshedOnItsIntervalAndAKeyRemovedStopsVerifying() async throws {
        try await withServer(try UserTokenSetup { $0.jwksRefreshSeconds = 0.3 }) { setup throws in
            #expect(try await awaitKeySet(setup))
            let token = try setup.token(kid: "ec-1")
            #expect(try await setup.get(token: token).status == 200)
            setup.keys.answer(.keySet(setup.provider.keySet(["rsa-1"])))
            let fetched = setup.keys.requestCount
            #expect(await eventually(within: 20) { setup.keys.requestCount >= fetched + 2 })
            let refused = try await setup.get(token: token)
            #expect(refused.status == 401)
            #expect(refused.text.contains("unknown kid"))
        }
    }

    @Test(arguments: [
        KeySetServer.Answer.down, .status(500), .keySet(Array("<html>".utf8)), .keySet(Array(#"{"keys":7}"#.utf8)),
    ])
    func anOutageKeepsTheLastGoodSet(_ outage: KeySetServer.Answer) async throws {
        try await withServer(try UserTokenSetup { $0.jwksRefreshSeconds = 0.3 }) { setup throws in
            #expect(try await awaitKeySet(setup))
            setup.keys.answer(outage)
            let fetched = setup.keys.requestCount
            #expect(await eventually(within: 20) { setup.keys.requestCount >= fetched + 2 })
            #expect(try await setup.get(token: try setup.token()).status == 200)
            #expect(try await setup.get(token: try setup.token(kid: "ec-1")).status == 200)
            #expect(try await setup.harness.get("/readyz").status == 200)
            #expect(setup.proxy.logLines.contains { $0.contains("key set fetch failed; keeping the set held") })
        }
    }

    @Test func aSetOverItsBoundsIsRefusedWhole() async throws {
        let provider = try SignInProvider()
        let huge = SignInProvider.json(["keys": [], "padding": String(repeating: "x", count: 300 * 1024)])
        let many = provider.keySet(extra: (0..<64).map { ["kty": "oct", "kid": "k\($0)", "k": "AAAA"] })
        for (answer, reason) in [(huge, "larger than 262144 bytes"), (many, "more than 64")] {
            try await withServer(try UserTokenSetup(keySet: .keySet(answer))) { setup throws in
                #expect(
                    try await eventually(within: 20) { try await setup.harness.get("/readyz").text.contains(reason) })
                #expect(try await setup.get(token: try setup.token()).status == 503)
            }
        }
    }

    @Test func keysOfOtherTypesUsesOrAlgorithmsAreSkipped() async throws {
        let provider = try SignInProvider()
        var rsa = provider.keys["rsa-1"]!.publicParameters
        rsa["kid"] = "rsa-1"
        rsa["use"] = "enc"
        var ec = provider.keys["ec-1"]!.publicParameters
        ec["kid"] = "ec-1"
        let set = SignInProvider.json([
            "keys": [
                rsa, ec, ["kty": "oct", "kid": "oct-1", "k": Base64URL.encode(Array(SignInProvider.secret.utf8))],
                ["kty": "OKP", "kid": "ed-1", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"],
                ["kty": "EC", "kid": "p384", "crv": "P-384", "x": ec["x"]!, "y": ec["y"]!],
            ] as [[String: String]]
        ])
        try await withServer(try UserTokenSetup(provider: provider, keySet: .keySet(set))) { setup throws in
            #expect(try await awaitKeySet(setup))
            #expect(try await setup.get(token: try setup.token(kid: "ec-1")).status == 200, "the usable key serves")
            let encryption = try await setup.get(token: try setup.token(kid: "rsa-1"))
            #expect(
                encryption.status == 401 && encryption.text.contains(#"use is \"enc\", not sig"#)
                    && !encryption.text.contains("retry"),
                "a key for encryption verifies nothing, and the token is told why")
            let oct = SignInProvider.hs256(
                claims: SignInProvider.claims(subject: "u", now: UserTokenSetup.now), header: ["kid": "oct-1"])
            #expect(try await setup.get(token: oct).status == 200, "HS256 is the secret's, whatever kid it names")
        }
    }

    @Test func theFetchFollowsNoRedirectAndSendsNoCredentials() async throws {
        let provider = try SignInProvider()
        try await withServer(try KeySetServer(.keySet(provider.keySet()))) { elsewhere throws in
            try await withServer(try UserTokenSetup(keySet: .redirect(elsewhere.url))) { setup throws in
                #expect(
                    try await eventually(within: 20) {
                        try await setup.harness.get("/readyz").text.contains("answered 302")
                    })
                #expect(elsewhere.requestCount == 0)
                setup.keys.answer(.keySet(setup.provider.keySet()))
                #expect(try await awaitKeySet(setup))
                let head = try #require(setup.keys.requests.last).lowercased()
                #expect(head.hasPrefix("get /.well-known/jwks.json http/1.1"))
                #expect(!head.contains("authorization") && !head.contains(ProxyHarness.key.lowercased()))
            }
        }
    }
}
