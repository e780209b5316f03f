import AmodbBytes
import AmodbCrypto
import AmodbHTTP

/// Who may call the API routes: app tokens (`AppTokens`), users' ID tokens
/// (`TokenVerifier`), both (an app moving from one to the other), or anyone. It reads a
/// request's `Authorization` (and, for app tokens, an `api_key` query parameter) and says
/// who is calling, or the answer that refuses them; every outcome is counted in
/// `amodb_proxy_auth_total`. A token is never part of an answer, a log line or a label.
///
/// What it costs a client is bounded: a valid app token is a few constant-time comparisons,
/// and a user's token that verified before is a digest and a lookup. Everything else (a
/// token to verify, a wrong token, none) is charged to the client's address when a refusal
/// comes of it, and once the address has spent its rate (`AMODB_CLIENT_RATE_LIMIT`) on
/// refusals it gets 429 before anything is checked: a flood of made-up tokens costs a
/// lookup each, not a signature check.
struct Callers: Sendable {
    let tokens: AppTokens
    let users: TokenVerifier?
    /// The key set the users' tokens may need, for `/readyz`.
    let keySet: KeySetRefresher?
    /// The per-client limiter whose address buckets refusals are charged to; `nil`: none.
    let rateLimiter: CallerRateLimiter?
    let metrics: ProxyMetrics
    /// The proofs of a genuine app and the policy over them; `nil`: none is checked.
    var proofs: Proofs? = nil

    /// The proofs of a genuine app a request may carry (an App Attest session token as its
    /// bearer, a Firebase App Check token in `X-Firebase-AppCheck`), and what the proxy asks.
    struct Proofs: Sendable {
        /// App Attest's session tokens, when App Attest is on.
        let sessions: SessionTokens?
        /// Firebase App Check's tokens, when App Check is on (`TokenVerifier` with
        /// Firebase's rules and its own key set).
        let appCheck: TokenVerifier?
        /// App Check's key set, for `/readyz`.
        let appCheckKeySet: KeySetRefresher?
        let policy: ProofPolicy
        let mode: ProofMode
    }

    /// The credential a request showed, or the answer that refuses it.
    typealias Verdict = Result<Caller.Credential, CallerRefusal>

    /// Whether any credential is required or read.
    var isEnabled: Bool { tokens.isEnabled || users != nil || proofs != nil }

    /// Whether a request without any credential is served (no app token, user or proof is required).
    private var isOpen: Bool { !tokens.isEnabled && users == nil }

    /// Who speaks for a request, and the proof of a genuine app it carried: an App Attest
    /// session token as its bearer, or an App Check token (`appCheck`, the
    /// `X-Firebase-AppCheck` field) beside whatever else it sends. A proof that does not
    /// verify is refused (401, charged to the address), whatever the policy: an app that
    /// sends one means it.
    func identifyWithProof(
        _ authorization: String?, appCheck: String?, query: RequestQuery, from client: Caller,
        clock: any ProxyClock, loop: Int?
    ) -> (Verdict, Proof) {
        guard let proofs else {
            let verdict = identify(authorization, query: query, from: client, clock: clock, loop: loop)
            return (verdict, Self.proof(of: verdict))
        }
        if let sessions = proofs.sessions, let field = authorization {
            let bytes = field.utf8.span
            if let bearer = Self.bearer(in: bytes), SessionTokens.looksLikeSessionToken(bytes.extracting(bearer)) {
                let now = clock.now()
                switch sessions.verify(bytes.extracting(bearer), now: now) {
                case .success(let name):
                    metrics.recordAuth(.verified, loop: loop)
                    return (.success(.attested(name)), .attested)
                case .failure(let refusal):
                    if let throttled = throttled(client, now: now, loop: loop) { return (throttled, .attested) }
                    charge(client, now: now)
                    metrics.recordAuth(refusal == .expired ? .expired : .badSignature, loop: loop)
                    return (
                        .failure(CallerRefusal(response: Self.unauthorized(refusal.message, challenge: .invalidToken))),
                        .attested
                    )
                }
            }
        }
        var proof = Proof.none
        if let appCheck, let verifier = proofs.appCheck {
            let token = Array(appCheck.utf8)
            let digest = verifier.memory.digest(of: token.span)
            let now = clock.now()
            if verifier.remembered(digest, now: now) == nil {
                if let throttled = throttled(client, now: now, loop: loop) { return (throttled, .appCheck) }
                switch verifier.verify(token, digest: digest, now: now) {
                case .success: break
                case .failure(.noKeySet):
                    return (
                        .failure(
                            CallerRefusal(
                                response: APIRefusal(
                                    .keySetMissing,
                                    "The proxy does not hold Firebase App Check's key set yet; retry shortly.",
                                    retryAfter: proofs.appCheckKeySet?.retryAfter(now: now) ?? 1
                                ).response)), .appCheck
                    )
                case .failure(let refusal):
                    charge(client, now: now)
                    metrics.recordAuth(refusal.result, loop: loop)
                    return (.failure(CallerRefusal(response: Self.appCheckRefusal(refusal))), .appCheck)
                }
            }
            proof = .appCheck
        }
        // Without an app token or user required, a proof alone lets a request in.
        if isOpen || (proof != .none && authorization == nil) {
            let verdict: Verdict =
                isOpen && authorization == nil
                ? .success(.none)
                : identifyOptional(authorization, query: query, from: client, clock: clock, loop: loop)
            return (verdict, proof == .none ? Self.proof(of: verdict) : proof)
        }
        let verdict = identify(authorization, query: query, from: client, clock: clock, loop: loop)
        return (verdict, proof == .none ? Self.proof(of: verdict) : proof)
    }

    /// With nothing required: a credential sent is still read (a user's token names the
    /// user for the limits), and one that does not verify is refused.
    private func identifyOptional(
        _ authorization: String?, query: RequestQuery, from client: Caller, clock: any ProxyClock, loop: Int?
    ) -> Verdict {
        guard authorization != nil, tokens.isEnabled || users != nil else { return .success(.none) }
        return identify(authorization, query: query, from: client, clock: clock, loop: loop)
    }

    /// The proof a verdict stands for.
    private static func proof(of verdict: Verdict) -> Proof {
        switch verdict {
        case .success(.attested): .attested
        case .success(.user): .user
        case .success(.appToken): .appToken
        case .success(.none), .failure: .none
        }
    }

    /// The 401 for an App Check token refused: the user token's message, said of App Check.
    private static func appCheckRefusal(_ refusal: TokenRefusal) -> HTTPResponse {
        let message: String =
            switch refusal {
            case .wrongIssuer, .wrongAudience:
                "The App Check token is for another Firebase project (see AMODB_APP_CHECK_PROJECT)."
            case .wrongSubject:
                "The App Check token is for an app this proxy does not accept (see AMODB_APP_CHECK_APPS)."
            case .expired: "The App Check token has expired; the Firebase SDK gets a fresh one."
            default:
                refusal.message.replacingOccurrences(of: "The user token", with: "The App Check token")
                    .replacingOccurrences(of: "user token's", with: "App Check token's")
            }
        return unauthorized(message, challenge: .invalidToken)
    }

    /// The 401 for a request that lacks the proof the policy asks.
    func proofRequired(_ policy: ProofPolicy) -> HTTPResponse {
        let what =
            switch policy {
            case .attested:
                "proof of a genuine copy of the app: an App Attest session (Authorization: Bearer, from POST /attest/session) or a Firebase App Check token (X-Firebase-AppCheck)"
            case .user: "a signed-in user's ID token (Authorization: Bearer)"
            case .any:
                "proof of a genuine copy of the app (an App Attest session or an App Check token) or a signed-in user's ID token"
            case .none: "nothing"
            }
        return Self.unauthorized("This proxy requires \(what) (AMODB_PROOF).", challenge: .realmOnly)
    }

    /// Who `authorization` (the field's value, if sent) or, with app tokens, the query's
    /// `api_key` speaks for, at `clock`'s now (read only when needed); `loop` is the event
    /// loop whose queue this runs on (`ResponderContext.loopIndex`), for the count.
    func identify(
        _ authorization: String?, query: RequestQuery, from client: Caller, clock: any ProxyClock, loop: Int?
    ) -> Verdict {
        guard isEnabled else { return .success(.none) }
        guard let field = authorization else {
            return identify(
                field: "".utf8.span, bearer: nil, headerSent: false, query: query, client: client, clock: clock,
                loop: loop)
        }
        // The field's own bytes, in place: a token is never copied unless it must be parsed.
        let bytes = field.utf8.span
        return identify(
            field: bytes, bearer: Self.bearer(in: bytes), headerSent: true, query: query, client: client, clock: clock,
            loop: loop)
    }

    /// `bearer`: where the token is in `field`, if it holds one.
    private func identify(
        field: Span<UInt8>, bearer: Range<Int>?, headerSent: Bool, query: RequestQuery, client: Caller,
        clock: any ProxyClock, loop: Int?
    ) -> Verdict {
        if let bearer {
            let bearer = field.extracting(bearer)
            if tokens.isEnabled, let token = tokens.authenticate(token: bearer) {
                metrics.recordAuth(.staticToken, loop: loop)
                return .success(.appToken(token))
            }
            guard let users else {
                return refuse(.invalidStaticToken, Self.notAClientToken, client: client, clock: clock, loop: loop)
            }
            let digest = users.memory.digest(of: bearer)
            let now = clock.now()
            if let user = users.remembered(digest, now: now) {
                metrics.recordAuth(.verified, loop: loop)
                return .success(.user(user))
            }
            if tokens.isEnabled, !Self.looksLikeJSONWebToken(bearer) {
                return refuse(
                    .invalidStaticToken, Self.neitherToken, challenge: .invalidToken, client: client, clock: clock,
                    loop: loop)
            }
            // A signature to check: not for an address that has spent its rate on refusals.
            if let throttled = throttled(client, now: now, loop: loop) { return throttled }
            switch users.verify(bearer.array(), digest: digest, now: now) {
            case .success(let user):
                metrics.recordAuth(.verified, loop: loop)
                return .success(.user(user))
            case .failure(.noKeySet):
                // Not the client's doing: nothing is charged.
                metrics.recordAuth(.noKeySet, loop: loop)
                return .failure(
                    CallerRefusal(
                        response: APIRefusal(
                            .keySetMissing, TokenRefusal.noKeySet.message,
                            retryAfter: keySet?.retryAfter(now: now) ?? 1
                        ).response))
            case .failure(let refusal):
                charge(client, now: now)
                metrics.recordAuth(refusal.result, loop: loop)
                return .failure(CallerRefusal(response: Self.unauthorized(refusal.message, challenge: .invalidToken)))
            }
        }
        // No bearer token: with app tokens, an `api_key` parameter may carry one (TMDB
        // libraries that can only put their key in the query).
        if tokens.isEnabled, let token = Self.apiKey(in: query, tokens: tokens) {
            guard let identity = token else {
                return refuse(
                    .invalidStaticToken, Self.notAClientTokenInQuery, client: client, clock: clock, loop: loop)
            }
            metrics.recordAuth(.staticToken, loop: loop)
            return .success(.appToken(identity))
        }
        let message =
            users == nil
            ? "A valid client token is required: send Authorization: Bearer <token> (or api_key=<token> in the query)."
            : tokens.isEnabled
                ? "A signed-in user's ID token is required (or a client token): send Authorization: Bearer <token>."
                : "A signed-in user's ID token is required: send Authorization: Bearer <ID token>."
        // A field of another scheme is as good as none for a user's token (as before).
        let result: AuthResult = headerSent && users == nil ? .invalidStaticToken : .missing
        return refuse(result, message, client: client, clock: clock, loop: loop)
    }

    /// A refusal that cost no signature check, charged to the client's address: 401, or
    /// 429 once the address has spent its rate.
    private func refuse(
        _ result: AuthResult, _ message: String, challenge: Challenge = .realmOnly, client: Caller,
        clock: any ProxyClock, loop: Int?
    ) -> Verdict {
        if client.limitedByAddress, let rateLimiter, let wait = rateLimiter.take(client.addressKey, now: clock.now()) {
            metrics.recordAuth(.throttled, loop: loop)
            return .failure(CallerRefusal(response: Self.tooManyRefusals(wait)))
        }
        metrics.recordAuth(result, loop: loop)
        return .failure(CallerRefusal(response: Self.unauthorized(message, challenge: challenge)))
    }

    /// 429 when the client's address has no request left in its bucket, else `nil`.
    private func throttled(_ client: Caller, now: Double, loop: Int?) -> Verdict? {
        guard client.limitedByAddress, let rateLimiter, let wait = rateLimiter.wait(client.addressKey, now: now) else {
            return nil
        }
        metrics.recordAuth(.throttled, loop: loop)
        return .failure(CallerRefusal(response: Self.tooManyRefusals(wait)))
    }

    /// Takes one request from the client's address bucket, for a refusal.
    private func charge(_ client: Caller, now: Double) {
        guard client.limitedByAddress, let rateLimiter else { return }
        _ = rateLimiter.take(client.addressKey, now: now)
    }

    /// Why user tokens (or App Check tokens) cannot be verified yet, for `/readyz`; `nil` when they can.
    var notReadyReason: String? { keySet?.notReadyReason ?? proofs?.appCheckKeySet?.notReadyReason }

    /// What `/readyz` adds about the key set: the keys it lists that are not used, with
    /// why, as a JSON member (`,"skipped_keys":[…]`), or nothing.
    var readinessDetail: String {
        guard let skipped = keySet?.skippedKeys, !skipped.isEmpty else { return "" }
        let keys = skipped.map { key in
            #"{"kid":"# + (key.keyID.map(JSONText.quoted) ?? "null") + #","index":"# + String(key.index)
                + #","reason":"# + JSONText.quoted(key.reason) + "}"
        }
        return #","skipped_keys":["# + keys.joined(separator: ",") + "]"
    }

    /// The token after `Bearer ` (the scheme in any case, RFC 7235 §2.1), or `nil` when
    /// the field names another scheme or holds nothing after it.
    static func bearer(in field: Span<UInt8>) -> Range<Int>? {
        let scheme: StaticString = "bearer "
        let count = scheme.utf8CodeUnitCount
        guard field.count > count, ASCIIBytes.equalsIgnoringCase(field, 0, count, scheme) else { return nil }
        var start = count
        var end = field.count
        while start < end, field[start] == UInt8(ascii: " ") { start += 1 }
        while end > start, field[end - 1] == UInt8(ascii: " ") { end -= 1 }
        return start < end ? start..<end : nil
    }

    /// The query's first `api_key`, when it has one: the identity of the app token it is,
    /// or `nil` inside when it is none.
    private static func apiKey(in query: RequestQuery, tokens: AppTokens) -> String?? {
        let name = "api_key"
        var found: String??
        query.forEachItem { (item, value) in
            guard found == nil, ASCIIBytes.utf8(of: name, equals: item) else { return }
            found = .some(tokens.authenticate(token: value))
        }
        return found
    }

    /// Whether a token has the form of a JSON Web Token: a first part, before a dot, that
    /// is base64url for a JSON object. An app token is anything else.
    static func looksLikeJSONWebToken(_ token: Span<UInt8>) -> Bool {
        guard let dot = token.firstIndex(of: UInt8(ascii: ".")), dot >= 2 else { return false }
        // Two characters carry the first byte; four decode to three bytes on their own.
        return Base64URL.decode(token.extracting(..<min(dot, 4)).array())?.first == UInt8(ascii: "{")
    }

    /// What a 401's `WWW-Authenticate` says (RFC 6750 §3.1).
    enum Challenge {
        /// The realm only: no credential, or an app token (which cannot be refreshed).
        case realmOnly
        /// `error="invalid_token"`: a token was read and refused; a client gets a fresh one.
        case invalidToken
    }

    static let notAClientToken =
        "The client token is not one this proxy accepts (see AMODB_PROXY_TOKENS): an app version whose token was retired is refused so."
    static let notAClientTokenInQuery =
        "The api_key parameter is not a client token this proxy accepts (see AMODB_PROXY_TOKENS): an app version whose token was retired is refused so."
    static let neitherToken =
        "The token is neither a client token this proxy accepts (see AMODB_PROXY_TOKENS: an app version whose token was retired is refused so) nor a user's ID token (a JWT: three base64url parts, the first a JSON header)."

    /// A 401 with the realm, and `error="invalid_token"` when asked.
    private static func unauthorized(_ message: String, challenge: Challenge) -> HTTPResponse {
        var headers = HTTPHeaders()
        switch challenge {
        case .realmOnly: headers.set("WWW-Authenticate", #"Bearer realm="amodb-proxy""#)
        case .invalidToken: headers.set("WWW-Authenticate", #"Bearer realm="amodb-proxy", error="invalid_token""#)
        }
        return APIRefusal(.unauthorized, message, headers: headers).response
    }

    /// A 429 for an address that spent its rate on refusals.
    private static func tooManyRefusals(_ wait: Double) -> HTTPResponse {
        APIRefusal.tooManyRequests(
            { "Too many refused requests from this address; try again in \($0) s." }, wait: wait
        ).response
    }
}
