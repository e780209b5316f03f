import AmodbCrypto
import Foundation

/// A compact JSON Web Signature (RFC 7515 §7.1) carrying a JSON Web Token's claims (RFC
/// 7519), read but not yet trusted: its header and claims decoded, its signature and the
/// signing input kept for the verifier. Only the fields the proxy uses are kept; headers
/// that name where to fetch a key (`jku`, `jwk`, `x5u`, `x5c`) are ignored, as the keys
/// are the proxy's configuration, never the token's.
struct JSONWebToken: Sendable {
    /// `alg`: the algorithm the token says it was signed with.
    let algorithm: String
    /// `kid`: which key of the set signed it.
    let keyID: String?
    let issuer: String?
    /// `sub`; the verifier requires it (RFC 7515's examples have none, so reading does not).
    let subject: String?
    /// `aud`, a string or an array of strings in the token.
    let audiences: [String]
    /// `exp`, `nbf` and `iat`, in seconds since 1970; the verifier requires `exp`.
    let expires: Double?
    let notBefore: Double?
    let issuedAt: Double?
    /// The header and claims parts as sent, with the dot between them: what was signed.
    let signingInput: [UInt8]
    let signature: [UInt8]

    /// Reads `token` (the bytes after `Bearer `); throws why it is not a token.
    init(_ token: some Collection<UInt8>) throws(TokenRefusal) {
        guard token.count <= TokenRefusal.maxTokenBytes else { throw .malformed(.tooLong) }
        let parts = token.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .malformed(.partCount) }
        guard let headerBytes = Base64URL.decode(parts[0]), let claimsBytes = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2])
        else { throw .malformed(.encoding) }
        guard let header = Self.object(headerBytes) else { throw .malformed(.headerJSON) }
        guard let claims = Self.object(claimsBytes) else { throw .malformed(.claimsJSON) }
        // RFC 7515 §4.1.11: a recipient that does not understand a listed extension must
        // refuse the token, and this one understands none.
        if header["crit"] != nil { throw .critical }
        guard let algorithm = header["alg"] as? String else { throw .malformed(.missingAlgorithm) }
        self.algorithm = algorithm
        keyID = try Self.optional(String.self, header["kid"])
        issuer = try Self.optional(String.self, claims["iss"])
        subject = try Self.optional(String.self, claims["sub"])
        switch claims["aud"] {
        case nil: audiences = []
        case let one as String: audiences = [one]
        case let many as [Any]:
            let strings = many.compactMap { $0 as? String }
            guard strings.count == many.count else { throw .malformed(.claimType) }
            audiences = strings
        default: throw .malformed(.claimType)
        }
        expires = try Self.time(claims["exp"])
        notBefore = try Self.time(claims["nbf"])
        issuedAt = try Self.time(claims["iat"])
        signingInput = Array(parts[0]) + [UInt8(ascii: ".")] + Array(parts[1])
        self.signature = signature
    }

    /// A JSON object, or `nil` when the bytes are not one.
    private static func object(_ bytes: [UInt8]) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any]
    }

    /// A value that must have `type` when present.
    private static func optional<Value>(_ type: Value.Type, _ value: Any?) throws(TokenRefusal) -> Value? {
        guard let value else { return nil }
        guard let typed = value as? Value else { throw .malformed(.claimType) }
        return typed
    }

    /// A NumericDate (RFC 7519 §2): a finite number of seconds since 1970, when present.
    private static func time(_ value: Any?) throws(TokenRefusal) -> Double? {
        guard let value else { return nil }
        guard let number = value as? NSNumber, number.doubleValue.isFinite else {
            throw .malformed(.claimType)
        }
        return number.doubleValue
    }
}
