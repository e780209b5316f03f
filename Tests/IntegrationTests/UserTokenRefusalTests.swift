import AmodbCrypto
import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

/// Users' ID tokens through the built server: what verifies (RS256 and ES256 from the key
/// set, HS256 with the secret) reaches amodb; every token that does not is refused with
/// 401, `WWW-Authenticate: Bearer … error="invalid_token"` and a JSON body saying what to
/// fix, and reaches nothing.
@Suite(.timeLimit(.minutes(1)))
struct UserTokenRefusalTests {
    /// A token broken one way, and the words its refusal must say.
    enum Broken: String, CaseIterable, CustomTestStringConvertible {
        case algorithmNone, hs256SignedWithTheRSAPublicKey, rs256HeaderOnTheECKey, critHeader, over8KiB, badBase64URL,
            badJSON
        case twoParts, fourParts, badSignature, hs256WithAnotherSecret, expired, notYetValid, issuedInTheFuture,
            wrongIssuer
        case wrongAudience, unknownKid, noSubject, noExpiry, noKid, claimTwice

        var testDescription: String { rawValue }

        /// Words the `status_message` must hold.
        var says: String {
            switch self {
            case .algorithmNone, .hs256SignedWithTheRSAPublicKey, .rs256HeaderOnTheECKey: "algorithm is not accepted"
            case .critHeader: "crit"
            case .over8KiB: "longer than 8192 bytes"
            case .badBase64URL: "not base64url"
            case .badJSON: "header is not a JSON object"
            case .twoParts, .fourParts: "three parts"
            case .badSignature, .hs256WithAnotherSecret: "bad signature"
            case .expired: "expired"
            case .notYetValid: "not valid yet"
            case .issuedInTheFuture: "issued in the future"
            case .wrongIssuer: "wrong issuer"
            case .wrongAudience: "wrong audience"
            case .unknownKid: "unknown kid"
            case .noSubject: "no sub"
            case .noExpiry: "no exp"
            case .noKid: "header has no kid"
            case .claimTwice: "claims give the member sub twice"
            }
        }

        /// The `result` label it is counted under.
        var result: String {
            switch self {
            case .algorithmNone, .hs256SignedWithTheRSAPublicKey, .rs256HeaderOnTheECKey: "algorithm"
            case .critHeader, .over8KiB, .badBase64URL, .badJSON, .twoParts, .fourParts, .noSubject, .noExpiry,
                .noKid, .claimTwice:
                "malformed"
            case .badSignature, .hs256WithAnotherSecret: "bad_signature"
            case .expired: "expired"
            case .notYetValid, .issuedInTheFuture: "not_yet_valid"
            case .wrongIssuer: "wrong_issuer"
            case .wrongAudience: "wrong_audience"
            case .unknownKid: "unknown_kid"
            }
        }

        func token(_ setup: UserTokenSetup) throws -> String {
            let now = UserTokenSetup.now
            let claims = SignInProvider.claims(subject: "user-1", now: now)
            let good = try setup.token()
            let parts = good.split(separator: ".").map(String.init)
            switch self {
            case .algorithmNone:
                return SignInProvider.signingInput(header: ["alg": "none", "typ": "JWT"], claims: claims) + "."
            case .hs256SignedWithTheRSAPublicKey:
                // The classic confusion: the RSA key's public parameters, published in the set, as an HMAC secret.
                let published = Array(setup.provider.keySet(["rsa-1"]))
                return SignInProvider.hs256(claims: claims, secret: published, header: ["kid": "rsa-1"])
            case .rs256HeaderOnTheECKey:
                let input = SignInProvider.signingInput(header: ["alg": "RS256", "kid": "ec-1"], claims: claims)
                return input + "." + Base64URL.encode(try setup.provider.keys["ec-1"]!.sign(Array(input.utf8)))
            case .critHeader:
                return try setup.provider.token(kid: "rsa-1", claims: claims, header: ["crit": ["exp"]])
            case .over8KiB:
                return try setup.token(claims: ["padding": String(repeating: "x", count: 6200)])
            case .badBase64URL:
                return parts[0] + "." + parts[1].replacingOccurrences(of: parts[1].prefix(1), with: "+") + "."
                    + parts[2]
            case .badJSON:
                return Base64URL.encode(Array(#"{"alg":"RS256","#.utf8)) + "." + parts[1] + "." + parts[2]
            case .twoParts:
                return parts[0] + "." + parts[1]
            case .fourParts:
                return good + "." + parts[2]
            case .badSignature:
                var signature = Array(parts[2].utf8)
                signature[20] = signature[20] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
                return parts[0] + "." + parts[1] + "." + String(decoding: signature, as: UTF8.self)
            case .hs256WithAnotherSecret:
                return SignInProvider.hs256(
                    claims: claims, secret: Array("another-secret-of-thirty-two-bytes-at-least".utf8))
            case .expired:
                return try setup.token(claims: ["iat": Int(now) - 7200, "exp": Int(now) - 61 - 5])
            case .notYetValid:
                return try setup.token(kid: "ec-1", claims: ["nbf": Int(now) + 600])
            case .issuedInTheFuture:
                return try setup.token(kid: nil, claims: ["iat": Int(now) + 600])
            case .wrongIssuer:
                return try setup.token(claims: ["iss": "https://evil.example.test"])
            case .wrongAudience:
                return try setup.token(kid: "ec-1", claims: ["aud": ["com.example.other", "com.example.third"]])
            case .unknownKid:
                var provider = setup.provider
                provider.keys["rsa-unpublished"] = try SignInProvider.spareRSAKey(2)
                return try provider.token(kid: "rsa-unpublished", claims: claims)
            case .noSubject:
                return SignInProvider.hs256(claims: claims.filter { $0.key != "sub" })
            case .noExpiry:
                return SignInProvider.hs256(claims: claims.filter { $0.key != "exp" })
            case .noKid:
                // Signed by a key the set holds, but not saying which.
                let input = SignInProvider.signingInput(header: ["alg": "RS256"], claims: claims)
                return input + "." + Base64URL.encode(try setup.provider.keys["rsa-1"]!.sign(Array(input.utf8)))
            case .claimTwice:
                let twice = #"{"sub":"user-1","sub":"user-2","exp":\#(Int(now) + 600)}"#
                return parts[0] + "." + Base64URL.encode(Array(twice.utf8)) + "." + parts[2]
            }
        }
    }

    @Test(arguments: Broken.allCases)
    func aBrokenTokenIsRefusedSayingWhatToFixAndReachesNothing(_ broken: Broken) async throws {
        // The algorithm confusion needs a proxy with no secret: with one, it is a bad signature.
        let secret = broken != .hs256SignedWithTheRSAPublicKey
        try await withServer(try UserTokenSetup(secret: secret)) { setup throws in
            #expect(try await awaitKeySet(setup))
            let token = try broken.token(setup)
            if broken == .over8KiB { #expect(token.utf8.count > 8192 && token.utf8.count < 12_000) }
            let response = try await setup.get(token: token)
            #expect(response.status == 401)
            #expect(response.header("WWW-Authenticate") == #"Bearer realm="amodb-proxy", error="invalid_token""#)
            let body = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
            let message = try #require(body["status_message"] as? String)
            #expect(message.contains(broken.says), "\(message)")
            if broken != .unknownKid { #expect(!message.contains("retry"), "asking again would not help: \(message)") }
            #expect(body["status_code"] as? Int == 401)
            #expect(
                !response.text.contains(token) && !token.split(separator: ".").contains { response.text.contains($0) })
            #expect(setup.proxy.sandbox.totalRequestCount == 0, "nothing refused reaches amodb")
            let metrics = try await setup.harness.metrics()
            #expect(try metrics.value("amodb_proxy_auth_total", ["result": broken.result]) == 1)
            #expect(try metrics.value("amodb_proxy_auth_total", ["result": "verified"]) == 0)
        }
    }

    @Test(arguments: ["rsa-1", "ec-1", nil] as [String?])
    func aGoodTokenReachesAmodbWithoutItself(_ kid: String?) async throws {
        try await withServer(try UserTokenSetup()) { setup throws in
            #expect(try await awaitKeySet(setup))
            let token = try setup.token(kid: kid)
            let response = try await setup.get(token: token)
            #expect(response.status == 200)
            #expect(response.text.contains(#""id":550"#))
            let upstream = try #require(setup.proxy.sandbox.receivedRequests.first)
            #expect(
                upstream.headers["Authorization"] == "Bearer \(ProxyHarness.key)",
                "amodb gets the proxy's key, not the user's token")
            #expect(try await setup.harness.metrics().value("amodb_proxy_auth_total", ["result": "verified"]) == 1)
        }
    }

    @Test func theLeewayCoversASlowClockAndAnAudienceArrayMayHoldOthers() async throws {
        try await withServer(try UserTokenSetup()) { setup throws in
            #expect(try await awaitKeySet(setup))
            let now = UserTokenSetup.now
            let late = try setup.token(claims: ["exp": Int(now) - 30, "iat": Int(now) - 3000])
            #expect(try await setup.get(token: late).status == 200, "30 s past exp, within the 60 s leeway")
            let early = try setup.token(kid: "ec-1", claims: ["nbf": Int(now) + 30, "iat": Int(now) + 30])
            #expect(try await setup.get(token: early).status == 200, "30 s early, within the leeway")
            let shared = try setup.token(kid: nil, claims: ["aud": ["com.example.other", SignInProvider.audience]])
            #expect(try await setup.get(token: shared).status == 200)
            let scheme = try await setup.harness.get(
                "/3/movie/550", headers: ["Authorization": "bEARER  " + (try setup.token()) + " "])
            #expect(scheme.status == 200, "the scheme in any case, spaces around the token (RFC 7235 §2.1)")
        }
    }

    @Test func noTokenGetsTheRealmWithoutAnError() async throws {
        try await withServer(try UserTokenSetup()) { setup throws in
            for headers in [[:], ["Authorization": "Basic dXNlcjpwYXNz"], ["Authorization": "Bearer   "]] {
                let response = try await setup.harness.get("/3/movie/550", headers: headers)
                #expect(response.status == 401)
                #expect(
                    response.header("WWW-Authenticate") == #"Bearer realm="amodb-proxy""#,
                    "RFC 6750 §3.1: no error without a token")
                #expect(response.text.contains("ID token is required"))
            }
            #expect(try await setup.harness.metrics().value("amodb_proxy_auth_total", ["result": "missing"]) == 3)
            #expect(setup.proxy.sandbox.totalRequestCount == 0)
        }
    }

    @Test func anAppTokenStillServesWhileAppsMoveToUserTokens() async throws {
        let app = "app-token-2b9d71c4e8f3a6"
        try await withServer(try UserTokenSetup { $0.clientTokens = [Secret(app)] }) { setup throws in
            #expect(try await awaitKeySet(setup))
            #expect(try await setup.get(token: app).status == 200)
            #expect(try await setup.get(token: try setup.token(kid: "ec-1")).status == 200)
            let wrong = try await setup.get(token: "app-token-wrong")
            #expect(wrong.status == 401)
            #expect(wrong.header("WWW-Authenticate")?.contains(#"error="invalid_token""#) == true)
            let metrics = try await setup.harness.metrics()
            #expect(try metrics.value("amodb_proxy_auth_total", ["result": "static_token"]) == 1)
            #expect(try metrics.value("amodb_proxy_auth_total", ["result": "verified"]) == 1)
        }
    }
}
