/// The JSON Web Signature algorithms (RFC 7518 §3) a public key verifies with: each key
/// serves exactly one, so a token cannot choose how its signature is checked.
public enum SignatureAlgorithm: String, Sendable, CaseIterable {
    /// RSASSA-PKCS1-v1_5 with SHA-256 (RFC 7518 §3.3).
    case rs256 = "RS256"
    /// ECDSA on P-256 with SHA-256, the signature as 64 bytes `r‖s` (RFC 7518 §3.4).
    case es256 = "ES256"
}
