import AmodbHTTP

/// Who may call the API routes: app tokens (`ClientTokens`), users' ID tokens
/// (`TokenVerifier`), both (an app moving from one to the other), or anyone. It reads a
/// request's `Authorization` and says who is calling, or the answer that refuses them;
/// every outcome is counted in `amodb_proxy_auth_total`. A token is never part of an
/// answer, a log line or a label.
struct Callers: Sendable {
    let tokens: ClientTokens
    let users: TokenVerifier?
    /// The key set the users' tokens may need, for `/readyz`.
    let keySet: KeySetRefresher?
    let metrics: ProxyMetrics

    /// The outcome for one request.
    enum Verdict {
        /// Nothing is required: anyone may call.
        case open
        /// An app token, by its name for the limits (`TokenIdentifier`).
        case token(String)
        /// A verified user.
        case user(UserIdentity)
        /// The answer to send instead (401, or 503 while the key set is missing).
        case refused(HTTPResponse)

        /// The verified user, if that is who calls.
        var user: UserIdentity? {
            if case .user(let user) = self { user } else { nil }
        }
    }

    /// Whether any credential is required.
    var isEnabled: Bool { tokens.isEnabled || users != nil }

    /// Who `authorization` (the field's value, if sent) speaks for, at `clock`'s now (read
    /// only for a user's token); `loop` is the event loop whose queue this runs on
    /// (`ResponderContext.loopIndex`), for the count.
    func identify(_ authorization: String?, clock: any ProxyClock, loop: Int?) -> Verdict {
        guard isEnabled else { return .open }
        guard let users else {
            guard let token = tokens.authenticate(authorization) else {
                metrics.recordAuth(authorization == nil ? .missing : .invalidStaticToken, loop: loop)
                return .refused(
                    Self.missingToken("A valid client token is required: send Authorization: Bearer <token>."))
            }
            metrics.recordAuth(.staticToken, loop: loop)
            return .token(token)
        }
        guard let presented = Self.bearer(authorization) else {
            metrics.recordAuth(.missing, loop: loop)
            return .refused(
                Self.missingToken("A signed-in user's ID token is required: send Authorization: Bearer <ID token>."))
        }
        if tokens.isEnabled, let token = tokens.authenticate(authorization) {
            metrics.recordAuth(.staticToken, loop: loop)
            return .token(token)
        }
        let now = clock.now()
        switch users.verify(presented, now: now) {
        case .success(let user):
            metrics.recordAuth(.verified, loop: loop)
            return .user(user)
        case .failure(let refusal):
            metrics.recordAuth(refusal.result, loop: loop)
            return .refused(Self.answer(refusing: refusal, retryAfter: keySet?.retryAfter(now: now) ?? 1))
        }
    }

    /// Why user tokens cannot be verified yet, for `/readyz`; `nil` when they can.
    var notReadyReason: String? { keySet?.notReadyReason }

    /// The token after `Bearer ` (the scheme in any case, RFC 7235 §2.1), or `nil` when
    /// the field is missing, names another scheme or holds nothing after it.
    static func bearer(_ authorization: String?) -> ArraySlice<UInt8>? {
        guard let field = authorization?.utf8 else { return nil }
        let scheme = Array("bearer ".utf8)
        guard field.count > scheme.count,
            zip(field, scheme).allSatisfy({ ((0x41...0x5A).contains($0) ? $0 | 0x20 : $0) == $1 })
        else {
            return nil
        }
        var token = ArraySlice(field.dropFirst(scheme.count))
        while token.first == UInt8(ascii: " ") { token = token.dropFirst() }
        while token.last == UInt8(ascii: " ") { token = token.dropLast() }
        return token.isEmpty ? nil : token
    }

    /// No credential at all: 401 with the realm and no `error` (RFC 6750 §3.1).
    private static func missingToken(_ message: String) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.set("WWW-Authenticate", #"Bearer realm="amodb-proxy""#)
        return .error(401, message, headers: headers)
    }

    /// A token that does not verify: 401 with `error="invalid_token"` (RFC 6750 §3.1), so a
    /// client knows to get a fresh one; while the key set is missing, 503 with `Retry-After`.
    private static func answer(refusing refusal: TokenRefusal, retryAfter: Int) -> HTTPResponse {
        var headers = HTTPHeaders()
        if refusal == .noKeySet {
            headers.set("Retry-After", String(retryAfter))
            return .error(503, refusal.message, headers: headers)
        }
        headers.set("WWW-Authenticate", #"Bearer realm="amodb-proxy", error="invalid_token""#)
        return .error(401, refusal.message, headers: headers)
    }
}
