import AmodbCrypto
import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

/// Firebase App Check tokens (`X-Firebase-AppCheck`), verified by Firebase's documented
/// rules against a stand-in of Firebase's key set: RS256 by a key of the set, `typ` JWT,
/// the project's issuer and audience (by number), an accepted app id as `sub`, `exp`.
@Suite(.timeLimit(.minutes(1)))
struct AppCheckTests {
    static let project = "123456789012"
    static let app = "1:123456789012:ios:0a1b2c3d4e5f"

    static func claims(now: Double = Date().timeIntervalSince1970) -> [String: any Sendable] {
        [
            "iss": "https://firebaseappcheck.googleapis.com/\(project)",
            "aud": ["projects/\(project)", "projects/movies-app"], "sub": app, "iat": Int(now), "exp": Int(now) + 3600,
        ]
    }

    @Test func aGoodTokenIsServedAndEachBrokenRuleIsRefused() async throws {
        let provider = try SignInProvider()
        try await withServer(try KeySetServer(.keySet(provider.keySet()))) { keys in
            let proxy = try SandboxedProxy { configuration in
                configuration.appCheckProject = Self.project
                configuration.appCheckApps = [Self.app]
                configuration.appCheckJWKSURL = keys.url
                configuration.proof = .attested
            }
            try await withServer(proxy) { proxy in
                #expect(await eventually { (try? await proxy.harness.get("/readyz").status) == 200 })
                func ask(_ token: String?) async throws -> RawHTTPResponse {
                    try await proxy.harness.get(
                        "/3/movie/550", headers: token.map { ["X-Firebase-AppCheck": $0] } ?? [:])
                }
                let good = try await ask(try provider.token(kid: "rsa-1", claims: Self.claims()))
                #expect(good.status == 200, "\(good.text)")
                let none = try await ask(nil)
                #expect(none.status == 401)
                #expect(none.text.contains("App Check token"), "\(none.text)")

                var wrongProject = Self.claims()
                wrongProject["iss"] = "https://firebaseappcheck.googleapis.com/999999999999"
                wrongProject["aud"] = ["projects/999999999999"]
                var expired = Self.claims(now: Date().timeIntervalSince1970 - 7200)
                expired["exp"] = Int(Date().timeIntervalSince1970) - 3600
                var otherApp = Self.claims()
                otherApp["sub"] = "1:123456789012:android:ffff"
                let refusals: [(String, String, String)] = [
                    (
                        "wrong project", try provider.token(kid: "rsa-1", claims: wrongProject),
                        "another Firebase project"
                    ),
                    ("expired", try provider.token(kid: "rsa-1", claims: expired), "expired"),
                    (
                        "another app", try provider.token(kid: "rsa-1", claims: otherApp),
                        "an app this proxy does not accept"
                    ),
                    (
                        "alg none",
                        SignInProvider.signingInput(header: ["alg": "none", "typ": "JWT"], claims: Self.claims()) + ".",
                        "algorithm"
                    ),
                    (
                        "unknown kid",
                        try provider.token(kid: "rsa-1", claims: Self.claims(), header: ["kid": "not-in-the-set"]),
                        "kid"
                    ),
                    (
                        "typ not JWT",
                        try provider.token(kid: "rsa-1", claims: Self.claims(), header: ["typ": "at+jwt"]), "typ"
                    ),
                ]
                for (name, token, words) in refusals {
                    let refused = try await ask(token)
                    #expect(refused.status == 401, "\(name): \(refused.status) \(refused.text)")
                    #expect(refused.text.contains(words), "\(name): \(refused.text)")
                }
                let samples = try await proxy.harness.metrics()
                #expect(
                    try samples.value(
                        "amodb_proxy_requests_by_proof_total", ["proof": "app_check", "outcome": "served"])
                        == 1)
            }
        }
    }
}
