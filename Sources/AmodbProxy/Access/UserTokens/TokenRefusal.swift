/// Why a user's token was not accepted, each with the message its 401 (or 503) says: what
/// to fix, never any of the token's text.
enum TokenRefusal: Error, Sendable, Equatable {
    /// Not a compact JSON Web Signature the proxy can read; the detail says which part.
    case malformed(Malformation)
    /// `alg` is `none`, or an algorithm none of the configured keys is for.
    case algorithm
    /// The header names extensions that must be understood (`crit`, RFC 7515 §4.1.11).
    case critical
    /// The signature does not verify with the key it names.
    case badSignature
    /// `exp` has passed (beyond the leeway).
    case expired
    /// `nbf` has not come yet (beyond the leeway).
    case notYetValid
    /// `iat` is in the future (beyond the leeway).
    case issuedInFuture
    /// `iss` is not an accepted issuer.
    case wrongIssuer
    /// No `aud` value is an accepted audience.
    case wrongAudience
    /// The header's `typ` is not the one required (App Check: `JWT`).
    case wrongType
    /// The `sub` is not one accepted (App Check: an app id not in `AMODB_APP_CHECK_APPS`).
    case wrongSubject
    /// The key set holds no key with the token's `kid`; `refetching`: a fetch of the set has begun.
    case unknownKeyID(refetching: Bool)
    /// The key set lists the token's `kid`, but the proxy does not use that key; the reason
    /// says why (a 1024-bit RSA key, a P-384 curve, `use: enc`).
    case unusableKey(String)
    /// The token needs the key set and none has been fetched yet (a 503, not a 401).
    case noKeySet

    /// What about the token's form is wrong.
    enum Malformation: Sendable, Equatable {
        case tooLong, partCount, encoding, headerJSON, claimsJSON, missingAlgorithm, missingSubject, missingExpiry,
            claimType
        /// A member the verifier reads (named) given twice in the header, or in the claims:
        /// valid JSON, so "not a JSON object" would send the developer looking elsewhere.
        case headerMemberTwice(String)
        case claimTwice(String)
        /// An asymmetric token without `kid`: no key of the set can be chosen. Asking again
        /// cannot help (fetching the set again would not either), so it is malformed.
        case missingKeyID
    }

    /// The most bytes a token may have: ID tokens are one or two KiB.
    static let maxTokenBytes = 8192

    /// The `status_message` of the refusal.
    var message: String {
        switch self {
        case .malformed(let what):
            let detail =
                switch what {
                case .tooLong: "it is longer than \(Self.maxTokenBytes) bytes"
                case .partCount: "it does not have three parts separated by dots"
                case .encoding: "a part is not base64url"
                case .headerJSON: "its header is not a JSON object"
                case .claimsJSON: "its claims are not a JSON object"
                case .headerMemberTwice(let name): "its header gives the member \(name) twice (once at most)"
                case .claimTwice(let name): "its claims give the member \(name) twice (once at most)"
                case .missingKeyID:
                    "its header has no kid, which names the key of the sign-in provider's key set that signed it"
                case .missingAlgorithm: "its header has no alg"
                case .missingSubject: "it has no sub claim"
                case .missingExpiry: "it has no exp claim"
                case .claimType:
                    "a claim has the wrong type (iss, sub and aud are strings; exp, nbf and iat are numbers)"
                }
            return
                "The user token is malformed: \(detail). Send the ID token exactly as the sign-in provider issued it."
        case .algorithm:
            return
                "The user token's algorithm is not accepted: this proxy verifies RS256 and ES256 with its key set, or HS256 with its shared secret, as configured (never none)."
        case .critical:
            return "The user token has a crit header, whose extensions this proxy does not understand."
        case .badSignature:
            return "The user token's signature does not verify (bad signature)."
        case .expired:
            return "The user token has expired; get a fresh ID token from the sign-in provider."
        case .notYetValid:
            return "The user token is not valid yet (nbf); check the device's clock."
        case .issuedInFuture:
            return "The user token was issued in the future (iat); check the device's clock."
        case .wrongIssuer:
            return "The user token's issuer is not one this proxy accepts (wrong issuer; see AMODB_JWT_ISSUER)."
        case .wrongAudience:
            return "The user token's audience is not one this proxy accepts (wrong audience; see AMODB_JWT_AUDIENCE)."
        case .wrongType:
            return "The token's header names another typ than the one this proxy accepts (JWT)."
        case .wrongSubject:
            return "The token's subject is not one this proxy accepts (wrong sub)."
        case .unknownKeyID(let refetching):
            return refetching
                ? "The user token's key (kid) is not in the key set (unknown kid); the set is being fetched again: retry in a few seconds."
                : "The user token's key (kid) is not in the key set (unknown kid)."
        case .unusableKey(let reason):
            return
                "The user token's key (kid) is in the key set but this proxy does not use it: \(reason). The sign-in provider must sign with an RS256 (RSA, 2048 bits or more) or ES256 (P-256) key."
        case .noKeySet:
            return "The proxy does not hold the sign-in provider's key set yet; retry shortly."
        }
    }

    /// The `result` label in `amodb_proxy_auth_total`.
    var result: AuthResult {
        switch self {
        case .malformed, .critical: .malformed
        case .algorithm: .algorithm
        case .badSignature: .badSignature
        case .expired: .expired
        case .notYetValid, .issuedInFuture: .notYetValid
        case .wrongIssuer: .wrongIssuer
        case .wrongAudience: .wrongAudience
        case .wrongType: .malformed
        case .wrongSubject: .wrongSubject
        case .unknownKeyID: .unknownKeyID
        case .unusableKey: .unusableKey
        case .noKeySet: .noKeySet
        }
    }
}

/// How a caller's `Authorization` fared: the `result` label of `amodb_proxy_auth_total`.
enum AuthResult: Int, CaseIterable, Sendable {
    case verified, staticToken, missing, invalidStaticToken, malformed, badSignature, expired, notYetValid, wrongIssuer,
        wrongAudience
    case unknownKeyID, algorithm, noKeySet
    /// An App Check token of an app not accepted.
    case wrongSubject
    /// The token names a key the set lists but the proxy does not use.
    case unusableKey
    /// Refused before it was checked: the client's address had spent its rate on refusals.
    case throttled

    /// The label's text.
    var label: String {
        switch self {
        case .verified: "verified"
        case .staticToken: "static_token"
        case .missing: "missing"
        case .invalidStaticToken: "invalid_static_token"
        case .malformed: "malformed"
        case .badSignature: "bad_signature"
        case .expired: "expired"
        case .notYetValid: "not_yet_valid"
        case .wrongIssuer: "wrong_issuer"
        case .wrongAudience: "wrong_audience"
        case .unknownKeyID: "unknown_kid"
        case .wrongSubject: "wrong_subject"
        case .algorithm: "algorithm"
        case .noKeySet: "no_key_set"
        case .unusableKey: "unusable_kid"
        case .throttled: "throttled"
        }
    }
}
