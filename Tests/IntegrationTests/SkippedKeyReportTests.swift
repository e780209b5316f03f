import AmodbCrypto
import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

/// Keys a key set lists but the proxy does not use (too short an RSA key, an exponent of
/// 1, a P-384 curve, `use: enc`) are logged with the reason and shown by `/readyz`; a set
/// with no usable key leaves the proxy not ready; a token whose `kid` names a skipped key
/// is told why, not to retry; and a token forged for a key with exponent 1 is refused.
@Suite(.timeLimit(.minutes(1)))
struct SkippedKeyReportTests {
    static func skippedOnly(_ provider: SignInProvider) -> [UInt8] {
        var rsa = provider.keys["rsa-1"]!.publicParameters
        rsa["kid"] = "rsa-1"
        rsa["use"] = "enc"
        var short = rsa
        short["kid"] = "rsa-1024"
        short["use"] = "sig"
        short["n"] = Base64URL.encode([0xC1] + [UInt8](repeating: 0x5A, count: 127))
        var ec = provider.keys["ec-1"]!.publicParameters
        ec["kid"] = "ec-384"
        ec["crv"] = "P-384"
        return SignInProvider.json(["keys": [rsa, short, ec]])
    }

    @Test func aSetWithNoUsableKeyIsNotReadyAndSaysWhy() async throws {
        let provider = try SignInProvider()
        try await withServer(
            try UserTokenSetup(provider: provider, keySet: .keySet(Self.skippedOnly(provider)), secret: false)
        ) { setup throws in
            #expect(
                try await eventually(within: 20) {
                    try await setup.harness.get("/readyz").text.contains("no usable key")
                })
            let ready = try await setup.harness.get("/readyz")
            #expect(ready.status == 503)
            #expect(
                ready.text.contains(
                    #""skipped_keys":[{"kid":"rsa-1","index":0,"reason":"its use is \"enc\", not sig"}"#))
            #expect(ready.text.contains("an RSA key of 1024 bits"))
            #expect(ready.text.contains(#"its curve is \"P-384\"; ES256 keys are P-256"#))

            let response = try await setup.get(token: try setup.token(kid: "rsa-1"))
            #expect(response.status == 401)
            #expect(response.text.contains("in the key set but this proxy does not use it: its use is"))
            #expect(!response.text.contains("retry"))
            #expect(
                try await setup.harness.metrics().value("amodb_proxy_auth_total", ["result": "unusable_kid"]) == 1)

            let logged = setup.proxy.logLines.filter { $0.contains("key set lists a key that is not used") }
            #expect(logged.count == 3)
            #expect(logged.contains { $0.contains("rsa-1024") && $0.contains("1024 bits") })
        }
    }

    @Test func aKeyWithExponentOneIsSkippedAndATokenForgedForItIsRefused() async throws {
        let provider = try SignInProvider()
        var weak = provider.keys["rsa-1"]!.publicParameters
        weak["kid"] = "weak"
        weak["e"] = Base64URL.encode([1])
        let modulus = try #require(Base64URL.decode(weak["n"]!))
        try await withServer(
            try UserTokenSetup(provider: provider, keySet: .keySet(provider.keySet(extra: [weak])))
        ) { setup throws in
            #expect(try await awaitKeySet(setup))
            let ready = try await setup.harness.get("/readyz")
            #expect(ready.status == 200)
            #expect(ready.text.contains(#"{"kid":"weak","index":2,"reason":"its RSA exponent e = 1 is refused"#))

            let input = SignInProvider.signingInput(
                header: ["alg": "RS256", "kid": "weak", "typ": "JWT"],
                claims: SignInProvider.claims(subject: "mallory", now: UserTokenSetup.now))
            let forged =
                input + "."
                + Base64URL.encode(ForgedSignature.rs256WithExponentOne(Array(input.utf8), modulusBytes: modulus.count))
            let response = try await setup.get(token: forged)
            #expect(response.status == 401)
            #expect(response.text.contains("e must be odd, at least 3"))
            #expect(setup.proxy.sandbox.totalRequestCount == 0)
            #expect(try await setup.get(token: try setup.token(kid: "rsa-1")).status == 200)
        }
    }
}
