import AmodbCrypto

/// Names a client token (or a verified user) where tokens must be told apart without being
/// shown: in the keys of the per-client rate limit and share of the calls for misses.
///
/// A name is `token:` and 16 hex digits, the first 8 bytes of an HMAC-SHA256 of the token
/// under a key derived from the amodb key, so it is
/// - the token's own, whatever its place in the settings: a token removed in a rotation
///   hands its bucket to no other;
/// - the same in every process that holds the same amodb key (every replica of a fleet,
///   and after a restart): no per-process seed, unlike `Hasher`;
/// - of no use to whoever sees it (a log, a Redis key) without the amodb key: it cannot be
///   reversed, and a guessed token cannot be tested against it offline.
/// 64 bits: the tokens in force at once are few, so two never share a name, and a name
/// keeps the rate limiter's keys short.
struct TokenIdentifier: Sendable {
    private let mac: HMACSHA256

    /// What the amodb key is turned into a key for this use with: the amodb key itself is
    /// sent to amodb, and a key derived for one purpose serves no other.
    private static let purpose = "amodb-proxy client token identity v1"

    /// Names tokens under a key derived from `amodbKey`.
    init(amodbKey: Secret) {
        mac = HMACSHA256(derivedFrom: Array(amodbKey.revealed.utf8), purpose: Self.purpose)
    }

    /// What a verified user's name starts with.
    static let userPrefix = "user:"

    /// The name of the user `subject` at `issuer` (the (`iss`, `sub`) pair names one user
    /// across providers): `user:` and 16 lower-case hex digits, so the limits, Redis and
    /// the log never see the subject, and two providers' equal subjects stay apart.
    func user(issuer: String, subject: String) -> UserIdentity {
        let code = mac.authenticationCode(for: Array(issuer.utf8) + [0] + Array(subject.utf8))
        return UserIdentity(hash: code.prefix(8).reduce(0) { $0 << 8 | UInt64($1) })
    }

    /// `token`'s name: `token:` and 16 lower-case hex digits.
    func identity(of token: Secret) -> String {
        "token:" + mac.hexCode(for: Array(token.revealed.utf8), bytes: 8)
    }
}
