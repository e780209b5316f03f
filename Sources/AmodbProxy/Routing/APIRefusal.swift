package import AmodbHTTP
import AmodbModels

/// An answer the proxy gives instead of amodb's: a status, the `status_message` that says
/// what to fix, and the fields that go with it (`Retry-After`, `WWW-Authenticate`,
/// `Allow`, `Vary`). Every error the proxy makes itself is one, and is rendered here only
/// (`response`), in amodb's JSON shape. Each `Reason` is listed, with its statuses, in
/// docs/operations.md's "Errors the proxy answers itself" (a test reads that table).
package struct APIRefusal: Sendable {
    /// Why the proxy refused, as the error list documents it.
    package enum Reason: String, Sendable, CaseIterable {
        /// The server could not read the request (a framing error, a head over its limits)
        /// or has no room for the connection.
        case unreadableRequest = "unreadable-request"
        /// `/status.json` before the proxy has its first figures.
        case starting
        /// `/readyz` while the proxy cannot serve: not listening yet, its key refused by amodb,
        /// or users' tokens not verifiable yet.
        case notReady = "not-ready"
        /// A method other than GET, HEAD (or OPTIONS with CORS).
        case methodNotAllowed = "method-not-allowed"
        /// A CORS preflight from an origin not allowed, or asking for too many fields.
        case preflightRefused = "preflight-refused"
        /// A request from a web page whose origin `AMODB_CORS_ORIGINS` does not list.
        case originRefused = "origin-refused"
        /// No credential, or one the proxy does not accept.
        case unauthorized
        /// The caller (or its address, on refusals) has spent its rate.
        case tooManyRequests = "too-many-requests"
        /// Users' tokens cannot be verified yet: the identity provider's key set is missing.
        case keySetMissing = "key-set-missing"
        /// A path the proxy does not forward.
        case unservedPath = "unserved-path"
        /// A forwarded route with an invalid parameter.
        case invalidParameter = "invalid-parameter"
        /// `Accept-Encoding` refuses every coding the answer has.
        case notAcceptable = "not-acceptable"
        /// amodb found nothing at the path (its 404, remembered briefly).
        case notFound = "not-found"
        /// No call could be made for a miss: the budget or the caller's share is spent, or
        /// too many paths are being fetched.
        case noCall = "no-call"
        /// amodb failed: its key or plan refused, an unusable answer, no answer in time.
        case upstreamFailed = "upstream-failed"
        /// A proof of a genuine app refused (`/attest/…`): a malformed body (400), a refused
        /// attestation, assertion or key (401), attestation off (404), no length (411),
        /// its state unreachable (503).
        case attestation

        /// The statuses a refusal for this reason may have.
        package var statuses: [Int] {
            switch self {
            case .unreadableRequest: [400, 408, 413, 414, 417, 431, 501, 503, 505]
            case .starting: [503]
            case .notReady: [503]
            case .methodNotAllowed: [405]
            case .preflightRefused: [400, 403]
            case .originRefused: [403]
            case .unauthorized: [401]
            case .tooManyRequests: [429]
            case .keySetMissing: [503]
            case .unservedPath: [404]
            case .invalidParameter: [400]
            case .notAcceptable: [406]
            case .notFound: [404]
            case .noCall: [503]
            case .upstreamFailed: [502, 503, 504]
            case .attestation: [401, 400, 404, 411, 503]
            }
        }
    }

    package let reason: Reason
    package let status: Int
    /// The `status_message`: what happened and what to do, never a secret.
    package let message: String
    /// The fields sent with it (`Cache-Control: no-store` is added when it is rendered).
    package var headers: HTTPHeaders

    /// A refusal for `reason`, with its only status unless `status` names one of its others.
    /// The body's `status_code` when it is not the HTTP status: amodb's own codes are
    /// numbers apps match on (1001: an App Attest key this proxy does not know).
    package var code: Int?
    /// JSON members written after amodb's three, each `,"name":value`: what a readiness
    /// probe reports beside its message (`/readyz`'s `status` and details).
    package var members = ""

    /// `retryAfter`: seconds until asking again may succeed, sent as `Retry-After` in whole
    /// seconds (`retryAfterSeconds`): the one place every refusal's field is written.
    package init(
        _ reason: Reason, status: Int? = nil, _ message: String, headers: HTTPHeaders = HTTPHeaders(),
        retryAfter: Double? = nil, code: Int? = nil
    ) {
        self.reason = reason
        self.status = status ?? reason.statuses[0]
        self.message = message
        self.headers = headers
        if let retryAfter { self.headers.set("Retry-After", String(Self.retryAfterSeconds(retryAfter))) }
        self.code = code
    }

    /// The answer: JSON in amodb's shape, `{"status_code":…,"status_message":"…","success":false}`,
    /// never stored by caches. `status_code` carries the HTTP status: amodb was not asked
    /// (or its answer is not passed on), so none of amodb's codes would be true. Written by
    /// hand: error answers are what a flood of bad requests gets, so they must be cheap.
    package var response: HTTPResponse {
        let body =
            "{\"status_code\":\(code ?? status),\"status_message\":\(JSONText.quoted(message)),\"success\":false"
            + members + "}"
        var headers = headers
        headers.set("Cache-Control", "no-store")
        return .json(status, Array(body.utf8), headers: headers)
    }

    /// `Retry-After` as whole seconds: at least 1, at most a day, whatever the input.
    static func retryAfterSeconds(_ seconds: Double) -> Int {
        seconds.checkedInt(.up, clampedTo: 1...Int(RetryAfter.longest)) ?? 1
    }

    /// The 429 of a caller over its rate, `wait` seconds before it may ask again.
    static func tooManyRequests(_ message: (Int) -> String, wait: Double) -> APIRefusal {
        APIRefusal(.tooManyRequests, message(retryAfterSeconds(wait)), retryAfter: wait)
    }

    /// The 404 for a path the proxy does not forward, naming it (as the access log does:
    /// `LoggedPath`, without its query, cut and escaped) and the paths it serves, so that a
    /// developer whose library asks for search or TV reads why, rather than amodb's "not
    /// found" for a movie it does not have.
    static func unserved(_ loggedPath: String, served: ServedRoutes) -> APIRefusal {
        APIRefusal(.unservedPath, "This proxy does not serve \(loggedPath); it serves \(served.text).")
    }

    /// amodb's 404, as the proxy keeps and serves it.
    static let notFound = APIRefusal(.notFound, "The resource you requested could not be found.")
}
