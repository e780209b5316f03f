import AmodbCrypto
import AmodbProxy
import AmodbTestSupport
import Foundation

/// A proxy in front of the stand-in amodb that verifies users' ID tokens from a sign-in
/// provider stand-in: its key set served by a `KeySetServer`, its HS256 secret set.
final class UserTokenSetup: Sendable {
    let provider: SignInProvider
    let keys: KeySetServer
    let proxy: SandboxedProxy

    /// `provider` signs (default: a new one); `keySet` is what the key set server answers at first (default: the provider's set);
    /// `adjust` may change the proxy's configuration after the user-token settings.
    init(
        provider: SignInProvider? = nil, keySet: KeySetServer.Answer? = nil, secret: Bool = true, jwks: Bool = true,
        clock: any ProxyClock = SystemClock(),
        adjust: (inout ProxyConfiguration) -> Void = { _ in }
    ) throws {
        let provider = try provider ?? SignInProvider()
        self.provider = provider
        keys = try KeySetServer(keySet ?? .keySet(provider.keySet()))
        let url = keys.url
        proxy = try SandboxedProxy(clock: clock) { configuration in
            configuration.jwtSecret = secret ? Secret(SignInProvider.secret) : nil
            configuration.jwksURL = jwks ? url : nil
            configuration.jwtIssuers = [SignInProvider.issuer]
            configuration.jwtAudiences = [SignInProvider.audience]
            adjust(&configuration)
        }
    }

    var harness: ProxyHarness { proxy.harness }

    /// Now, for tokens' `iat` and `exp`.
    static var now: Double { Date().timeIntervalSince1970 }

    /// A good token for `subject`, signed by the key `kid` (or HS256 with `kid` nil).
    func token(
        _ subject: String = "user-1", kid: String? = "rsa-1", claims extra: [String: any Sendable] = [:],
        now: Double = UserTokenSetup.now
    ) throws -> String {
        let claims = SignInProvider.claims(subject: subject, now: now).merging(extra) { $1 }
        guard let kid else { return SignInProvider.hs256(claims: claims) }
        return try provider.token(kid: kid, claims: claims)
    }

    /// `GET path` with `Authorization: Bearer <token>` (none when `token` is nil).
    func get(_ path: String = "/3/movie/550", token: String?, headers: [String: String] = [:]) async throws
        -> RawHTTPResponse
    {
        var headers = headers
        if let token { headers["Authorization"] = "Bearer " + token }
        return try await harness.get(path, headers: headers)
    }

    func shutdown() async {
        await proxy.shutdown()
        await keys.shutdown()
    }
}

extension UserTokenSetup: ScopedServer {}

/// The proxy's key set is held once `/readyz` says ready.
func awaitKeySet(_ setup: UserTokenSetup) async throws -> Bool {
    // The key set is fetched in the background: a loaded machine may take a while.
    try await eventually(within: 30) { try await setup.harness.get("/readyz").status == 200 }
}
