import AmodbBytes
import AmodbCrypto

/// Verifies a user's ID token (a JSON Web Token, RFC 7519) against the proxy's settings:
/// the signature with the HS256 secret or the key set's key named by `kid`, then the
/// issuer, the audience and the times. Each algorithm is tied to its key: HS256 only
/// with the secret, RS256 and ES256 only with a key of that type from the set, so a token
/// cannot choose how it is checked (an HS256 token "signed" with an RSA public key finds
/// no secret), and `none` is never accepted.
///
/// A token that verifies is remembered (`VerifiedTokens`): the same token again costs a
/// digest and a lookup, then the checks that depend on the clock (`exp`, `nbf`, `iat`) and
/// on the keys (their generation), never a parse or a signature check.
struct TokenVerifier: Sendable {
    /// What a verified token must say, and the clock skew allowed.
    struct Rules: Sendable {
        /// Accepted `iss` values.
        var issuers: Set<String>
        /// Accepted `aud` values: one of the token's must be among them.
        var audiences: Set<String>
        /// Clock skew allowed on `exp`, `nbf` and `iat`, in seconds.
        var leeway: Double
        /// Accepted `sub` values; `nil`: any (a user's). Firebase App Check's `sub` is the app's id.
        var subjects: Set<String>? = nil
        /// The header's `typ` required; `nil`: any or none.
        var type: String? = nil
    }

    /// Where the keys come from.
    private let secret: HMACSHA256?
    private let keySet: KeySetRefresher?
    private let rules: Rules
    private let identifier: TokenIdentifier
    /// The tokens that verified.
    let memory: VerifiedTokens

    /// A verifier with an HS256 `secret`, a `keySet`, or both; users are named for the
    /// limits by `identifier`; at most `remembering` verified tokens are remembered.
    init(
        secret: Secret?, keySet: KeySetRefresher?, rules: Rules, identifier: TokenIdentifier,
        remembering capacity: Int = VerifiedTokens.defaultCapacity
    ) {
        self.secret = secret.map { HMACSHA256(key: Array($0.revealed.utf8)) }
        self.keySet = keySet
        self.rules = rules
        self.identifier = identifier
        memory = VerifiedTokens(capacity: capacity)
    }

    /// The user `token` (the bytes after `Bearer `) speaks for, or why it is refused.
    func verify(_ token: some Collection<UInt8>, now: Double) -> Result<UserIdentity, TokenRefusal> {
        let digest = memory.digest(of: Array(token).span)
        if let user = remembered(digest, now: now) { return .success(user) }
        return verify(token, digest: digest, now: now)
    }

    /// The user a remembered token speaks for, when it is still good at `now` under the
    /// keys held now; `nil` when it must be verified (never seen, forgotten, expired, not
    /// yet valid, or verified under keys since replaced).
    func remembered(_ digest: SipHash128.Digest, now: Double) -> UserIdentity? {
        guard let token = memory.remembered(digest) else { return nil }
        guard token.generation == (keySet?.generation ?? 0), now <= token.expires + rules.leeway else {
            memory.forget(digest)
            return nil
        }
        // Not forgotten: a token used early (a device's clock ahead) becomes good in a moment.
        guard now + rules.leeway >= token.validFrom else { return nil }
        return UserIdentity(hash: token.user)
    }

    /// Verifies `token` (whose digest is `digest`) in full, and remembers it if it is good.
    func verify(_ token: some Collection<UInt8>, digest: SipHash128.Digest, now: Double)
        -> Result<UserIdentity, TokenRefusal>
    {
        Result { () throws(TokenRefusal) in
            let jwt = try JSONWebToken(token)
            let generation = try checkSignature(of: jwt, now: now)
            let subject = try checkClaims(of: jwt, now: now)
            let user = identifier.user(issuer: jwt.issuer ?? "", subject: subject)
            memory.remember(
                VerifiedTokens.Remembered(
                    user: user.hash, expires: jwt.expires ?? -.infinity,
                    validFrom: max(jwt.notBefore ?? -.infinity, jwt.issuedAt ?? -.infinity), generation: generation),
                at: digest)
            return user
        }
    }

    /// Whether the signature verifies with the one key its algorithm (and `kid`) may use;
    /// returns the generation of the keys it was checked under (for HS256, the key set's
    /// now: the secret itself never changes while running).
    @discardableResult
    func checkSignature(of jwt: JSONWebToken, now: Double) throws(TokenRefusal) -> UInt64 {
        switch jwt.algorithm {
        case "HS256":
            guard let secret else { throw .algorithm }
            let generation = keySet?.generation ?? 0
            guard secret.isAuthenticationCode(jwt.signature, of: jwt.signingInput) else { throw .badSignature }
            return generation
        case SignatureAlgorithm.rs256.rawValue, SignatureAlgorithm.es256.rawValue:
            guard let keySet else { throw .algorithm }
            let (key, generation) = try keySet.key(for: jwt.keyID, now: now)
            guard key.algorithm.rawValue == jwt.algorithm else { throw .algorithm }
            guard key.isValidSignature(jwt.signature, of: jwt.signingInput) else { throw .badSignature }
            return generation
        default:
            throw .algorithm
        }
    }

    /// A subject and an expiry, the issuer, the audience, then the times, each with the
    /// leeway; returns the subject. A token without `exp` would be good forever.
    @discardableResult
    func checkClaims(of jwt: JSONWebToken, now: Double) throws(TokenRefusal) -> String {
        guard let subject = jwt.subject, !subject.isEmpty else { throw .malformed(.missingSubject) }
        guard let expires = jwt.expires else { throw .malformed(.missingExpiry) }
        if let type = rules.type, jwt.type != type { throw .wrongType }
        if let subjects = rules.subjects, !subjects.contains(subject) { throw .wrongSubject }
        guard let issuer = jwt.issuer, rules.issuers.contains(issuer) else { throw .wrongIssuer }
        guard jwt.audiences.contains(where: rules.audiences.contains) else { throw .wrongAudience }
        guard now <= expires + rules.leeway else { throw .expired }
        if let notBefore = jwt.notBefore, now + rules.leeway < notBefore { throw .notYetValid }
        if let issuedAt = jwt.issuedAt, now + rules.leeway < issuedAt { throw .issuedInFuture }
        return subject
    }
}

/// A verified user, as the limits and the access log know them: never the `sub` itself.
struct UserIdentity: Sendable, Equatable {
    /// The first 8 bytes of a keyed hash of the issuer and subject (`TokenIdentifier`), as
    /// a big-endian number: all a remembered token keeps of its user.
    let hash: UInt64
    /// The key of the per-client rate limit and share of the calls for misses: `user:` and
    /// the hash's 16 lower-case hex digits.
    let limitKey: String
    /// The access log's `user` field: the same 16 hex digits.
    let logName: String

    /// The user named by `hash`; both names are written from it on the stack, then made
    /// strings (each a copy of ASCII bytes).
    init(hash: UInt64) {
        self.hash = hash
        // The prefix (`user:`) and 16 hex digits; room for a prefix of up to 8 bytes.
        var text = InlineArray<24, UInt8>(repeating: 0)
        var count = 0
        for byte in TokenIdentifier.userPrefix.utf8 {
            text[count] = byte
            count += 1
        }
        let digitsStart = count
        for index in 0..<16 {
            let digit = UInt8(truncatingIfNeeded: hash >> (60 - 4 * UInt64(index))) & 0x0F
            text[count] = digit < 10 ? 0x30 + digit : 0x57 + digit
            count += 1
        }
        let bytes = text.span
        limitKey = bytes.extracting(..<count).decodedString()
        logName = bytes.extracting(digitsStart..<count).decodedString()
    }
}
