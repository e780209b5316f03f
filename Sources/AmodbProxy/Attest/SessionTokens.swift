import AmodbBytes
import AmodbCrypto

/// The session tokens the proxy signs for an App Attest key once it has checked an
/// assertion: `as1.<key id, base64url>.<expiry, Unix seconds>.<HMAC-SHA256, base64url>`,
/// sent as `Authorization: Bearer`. A token that checked is remembered (`VerifiedTokens`,
/// by a keyed digest, until it expires): the next request with it costs a digest and a
/// lookup, what a remembered ID token costs; only a token not seen before is parsed and its
/// HMAC computed.
///
/// Every replica checks every replica's tokens: the secrets are the fleet's
/// (`AMODB_ATTEST_SESSION_SECRETS`, the first signing and all checking, so a new secret
/// put first rotates without refusing the tokens already out), or, when none is set, one
/// derived from the amodb key every replica holds (it never leaves the proxy; a key derived
/// for this purpose serves no other).
struct SessionTokens: Sendable {
    /// The secrets, the first signing.
    private let secrets: [HMACSHA256]
    /// How long a token is good, in seconds.
    let lifetime: Double
    /// The tokens that checked, by digest: their key's name and expiry.
    let memory = VerifiedTokens()

    /// What every token starts with: a token that does not is no session token.
    static let prefix = "as1."
    /// The longest token read: a key id of 32 bytes, an expiry and a code come to ~100.
    static let longestToken = 256

    /// Tokens signed with the first of `secrets` (or, with none, a secret derived from
    /// `amodbKey`), good for `lifetime` seconds.
    init(secrets: [Secret], amodbKey: Secret, lifetime: Double) {
        self.secrets =
            secrets.isEmpty
            ? [HMACSHA256(derivedFrom: Array(amodbKey.revealed.utf8), purpose: "amodb-proxy attest session v1")]
            : secrets.map { HMACSHA256(key: Array($0.revealed.utf8)) }
        self.lifetime = lifetime
    }

    /// A token for `keyID`, good until `now + lifetime`; returns it and its expiry.
    func issue(for keyID: [UInt8], now: Double) -> (token: String, expires: Double) {
        let expires = (now + lifetime).rounded(.down)
        let signed = Self.prefix + Base64URL.encode(keyID) + "." + String(Int64(expires))
        return (signed + "." + Base64URL.encode(secrets[0].authenticationCode(for: Array(signed.utf8))), expires)
    }

    /// Whether `token` starts as a session token does (then it is checked as one, and
    /// never as another kind of token).
    static func looksLikeSessionToken(_ token: Span<UInt8>) -> Bool {
        token.count > prefix.utf8.count && ASCIIBytes.equalsIgnoringCase(token, 0, prefix.utf8.count, "as1.")
    }

    /// Why a session token is refused.
    enum Refusal: Error, Equatable {
        case malformed, badSignature, expired

        var message: String {
            switch self {
            case .malformed: "The session token is malformed (as1.<key id>.<expiry>.<code>)."
            case .badSignature: "The session token was not signed by this proxy (or its secret was rotated out)."
            case .expired: "The session token has expired: ask for a new session (POST /attest/session)."
            }
        }
    }

    /// The name of the key `token` was issued for (`attested:` and its first 8 bytes in hex:
    /// what the limits count it by), when it was signed by one of the secrets and is good at `now`.
    func verify(_ token: Span<UInt8>, now: Double) -> Result<String, Refusal> {
        let digest = memory.digest(of: token)
        if let remembered = memory.remembered(digest) {
            guard now < remembered.expires else {
                memory.forget(digest)
                return .failure(.expired)
            }
            return .success(Self.name(ofPrefix: remembered.user))
        }
        switch check(token, now: now) {
        case .failure(let refusal): return .failure(refusal)
        case .success(let (keyID, expires)):
            let prefix = Self.prefix(of: keyID)
            memory.remember(
                .init(user: prefix, expires: expires, validFrom: -.infinity, generation: 0), at: digest)
            return .success(Self.name(ofPrefix: prefix))
        }
    }

    /// The first 8 bytes of a key id, big-endian.
    static func prefix(of keyID: [UInt8]) -> UInt64 {
        keyID.prefix(8).reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// `attested:` and the 16 hex digits of a key id's first 8 bytes.
    static func name(ofPrefix prefix: UInt64) -> String {
        let hex = String(prefix, radix: 16)
        return "attested:" + String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// The key id and expiry of `token`, checked in full.
    private func check(_ token: Span<UInt8>, now: Double) -> Result<([UInt8], Double), Refusal> {
        guard token.count <= Self.longestToken, Self.looksLikeSessionToken(token) else { return .failure(.malformed) }
        let bytes = token.array()
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 4, let keyID = Base64URL.decode(parts[1]), !keyID.isEmpty,
            let expires = Int64(String(decoding: parts[2], as: UTF8.self)), let code = Base64URL.decode(parts[3])
        else { return .failure(.malformed) }
        let signed = bytes[..<(bytes.count - parts[3].count - 1)]
        guard secrets.contains(where: { $0.isAuthenticationCode(code, of: signed) }) else {
            return .failure(.badSignature)
        }
        guard now < Double(expires) else { return .failure(.expired) }
        return .success((keyID, Double(expires)))
    }
}

/// The proof of a genuine app a request carried, strongest first: what
/// `amodb_proxy_requests_by_proof_total`, the access log's `proof` and `/status` count by.
enum Proof: Int, CaseIterable, Sendable {
    /// An App Attest session token this proxy signed.
    case attested
    /// A Firebase App Check token.
    case appCheck
    /// A signed-in user's ID token.
    case user
    /// An app token (`AMODB_PROXY_TOKENS`): the same string in every copy of the app.
    case appToken
    /// Nothing.
    case none

    var label: String { String(describing: literal) }

    /// The label as the access log copies it.
    var literal: StaticString {
        switch self {
        case .attested: "attested"
        case .appCheck: "app_check"
        case .user: "user"
        case .appToken: "app_token"
        case .none: "none"
        }
    }

    /// Whether it satisfies `policy`.
    func satisfies(_ policy: ProofPolicy) -> Bool {
        switch policy {
        case .none: true
        case .attested: self == .attested || self == .appCheck
        case .user: self == .user
        case .any: self == .attested || self == .appCheck || self == .user
        }
    }
}

/// What became of a request, as far as its proof goes.
enum ProofOutcome: Int, CaseIterable, Sendable {
    /// Served (it had the proof the policy asks, or none is asked).
    case served
    /// Refused for want of the proof (enforce mode).
    case refused
    /// Served in monitor mode although it lacked the proof.
    case wouldRefuse

    var label: String {
        switch self {
        case .served: "served"
        case .refused: "refused"
        case .wouldRefuse: "would_refuse"
        }
    }
}
