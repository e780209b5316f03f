package import AmodbCrypto
import Foundation

/// A stand-in for a sign-in provider (Sign in with Apple, Firebase, Auth0, Supabase): it
/// holds RS256 and ES256 keys under key ids and an HS256 secret, publishes its key set,
/// and issues ID tokens for users, well formed or broken in any way a test asks.
package struct SignInProvider: Sendable {
    /// The issuer its tokens carry by default.
    package static let issuer = "https://id.example.test"
    /// The audience its tokens carry by default (an app's bundle id).
    package static let audience = "com.example.movies"
    /// The HS256 secret (as `AMODB_JWT_SECRET`).
    package static let secret = "hs256-secret-for-tests-7f3a9c2e5b1d8f40"

    /// Signing keys by key id.
    package var keys: [String: SigningKey]

    /// A provider with an RSA 2048 key `rsa-1` and a P-256 key `ec-1`.
    package init() throws {
        let made = try Self.made.get()
        keys = ["rsa-1": made.rsa[0], "ec-1": made.p256]
    }

    /// The `index`th spare RSA 2048 key (0 to 2), for a rotation or a key the set does not hold.
    package static func spareRSAKey(_ index: Int) throws -> SigningKey {
        try made.get().rsa[1 + index]
    }

    /// The keys, made once per test process: making an RSA key takes a core for a good part
    /// of a second, and tests run on the cooperative pool, whose few threads every other
    /// test's tasks wait for.
    private static let made = Result { () throws(CryptoError) -> (rsa: [SigningKey], p256: SigningKey) in
        (try (0..<4).map { _ throws(CryptoError) in try SigningKey.rsa(bits: 2048) }, try SigningKey.p256())
    }

    /// The key set document (RFC 7517) of `kids` (default: every key), with `use` and `alg`,
    /// and any `extra` entries as they are.
    package func keySet(_ kids: [String]? = nil, extra: [[String: String]] = []) -> [UInt8] {
        let entries =
            (kids ?? keys.keys.sorted()).compactMap { kid -> [String: String]? in
                guard let key = keys[kid] else { return nil }
                return key.publicParameters.merging(["kid": kid, "use": "sig", "alg": key.algorithm.rawValue]) { $1 }
            } + extra
        return Self.json(["keys": entries])
    }

    /// The claims of a good token for `subject` at `now`: issuer, audience, `iat` now, `exp` in an hour.
    package static func claims(subject: String, now: Double) -> [String: any Sendable] {
        ["iss": issuer, "aud": audience, "sub": subject, "iat": Int(now), "exp": Int(now) + 3600]
    }

    /// A token signed by the key `kid` (RS256 or ES256 by the key's type), `header`
    /// entries added to or replacing `alg` and `kid`.
    package func token(kid: String, claims: [String: any Sendable], header: [String: any Sendable] = [:]) throws
        -> String
    {
        guard let key = keys[kid] else { throw MissingKey(kid: kid) }
        let head = (["alg": key.algorithm.rawValue, "kid": kid, "typ": "JWT"] as [String: any Sendable]).merging(header)
        { $1 }
        let input = Self.signingInput(header: head, claims: claims)
        return input + "." + Base64URL.encode(try key.sign(Array(input.utf8)))
    }

    /// A token signed with HS256 under `secret` (default: the provider's).
    package static func hs256(
        claims: [String: any Sendable], secret: [UInt8] = Array(secret.utf8), header: [String: any Sendable] = [:]
    ) -> String {
        let head = (["alg": "HS256", "typ": "JWT"] as [String: any Sendable]).merging(header) { $1 }
        let input = signingInput(header: head, claims: claims)
        return input + "." + Base64URL.encode(HMACSHA256(key: secret).authenticationCode(for: Array(input.utf8)))
    }

    /// `base64url(header) . base64url(claims)`.
    package static func signingInput(header: [String: any Sendable], claims: [String: any Sendable]) -> String {
        Base64URL.encode(json(header)) + "." + Base64URL.encode(json(claims))
    }

    /// Compact JSON with sorted keys.
    package static func json(_ object: Any) -> [UInt8] {
        Array((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data())
    }

    /// A key id the provider does not hold.
    package struct MissingKey: Error {
        package let kid: String
    }
}
