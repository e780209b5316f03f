import AmodbProxy
import Testing

/// The line `--sandbox` prints: a request that works with the configuration's credentials,
/// saying where the token comes from, and never a token or secret itself.
struct SandboxHintTests {
    static let url = "http://127.0.0.1:8080/3/trending/movie/week"
    static let bearer = "curl -H \"Authorization: Bearer $TOKEN\" \(url)"

    @Test func anOpenProxyIsAskedPlainly() {
        #expect(SandboxHint.line(for: ProxyConfiguration(), port: 8080) == "Try: curl \(Self.url)")
    }

    @Test func appTokensAreSentAsTheBearerAndNamedByWhereTheyAreSet() {
        var configuration = ProxyConfiguration()
        configuration.clientTokens = [Secret("app-token-5c0f9e2b7d41a8")]
        let line = SandboxHint.line(for: configuration, port: 8080)
        #expect(line == "Try: TOKEN=<an app token from AMODB_PROXY_TOKENS>; \(Self.bearer)")
        configuration.clientTokensFile = "/run/secrets/tokens"
        #expect(SandboxHint.line(for: configuration, port: 8080).contains("from AMODB_PROXY_TOKENS_FILE>"))
        #expect(!line.contains("app-token-5c0f9e2b7d41a8"))
    }

    @Test func signedInUsersAreToldWhichIDTokenTheProxyChecks() {
        var configuration = ProxyConfiguration()
        configuration.jwtSecret = Secret(String(repeating: "s", count: 32))
        configuration.jwtIssuers = ["https://ref.supabase.co/auth/v1"]
        configuration.jwtAudiences = ["authenticated"]
        let line = SandboxHint.line(for: configuration, port: 8080)
        #expect(
            line
                == "Try: TOKEN=<a signed-in user's ID token (signed with AMODB_JWT_SECRET, "
                + "iss https://ref.supabase.co/auth/v1, aud authenticated)>; \(Self.bearer)")
        #expect(!line.contains("sssssssss"))
        configuration.clientTokens = [Secret("app-token-5c0f9e2b7d41a8")]
        #expect(
            SandboxHint.line(for: configuration, port: 8080).hasPrefix(
                "Try: TOKEN=<an app token from AMODB_PROXY_TOKENS, or a signed-in user's ID token"))
    }

    @Test func aProofThatAppTokensCannotGiveIsNotOfferedThem() {
        var configuration = ProxyConfiguration()
        configuration.clientTokens = [Secret("app-token-5c0f9e2b7d41a8")]
        configuration.jwksURL = "https://appleid.apple.com/auth/keys"
        configuration.proof = .user
        let line = SandboxHint.line(for: configuration, port: 8080)
        #expect(line.hasPrefix("Try: TOKEN=<a signed-in user's ID token"), "\(line)")
        #expect(!line.contains("app token"))
        configuration.proofMode = .monitor
        #expect(SandboxHint.line(for: configuration, port: 8080).contains("an app token"), "monitor serves them")
        configuration.proofMode = .enforce
        configuration.proof = .attested
        let attested = SandboxHint.line(for: configuration, port: 8080)
        #expect(attested.contains("401") && attested.contains("AMODB_PROOF=attested"), "\(attested)")
    }
}
