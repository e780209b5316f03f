public import Foundation

/// Why an ``AmodbClient`` call failed, with a message an app can show as is.
///
/// A struct over an internal enum, so new kinds of failure can be added without breaking
/// callers (as async-http-client's `HTTPClientError`). Match on ``kind``:
/// `if error.kind == .unauthorized { … }` or a `switch` with a `default`.
public struct AmodbClientError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    /// What went wrong, in the detail the message is built from.
    enum Reason: Sendable, Equatable {
        /// The request could not be built (bad parameter, id or base URL).
        case invalidRequest(String)
        /// An HTTP status outside 2xx, with the server's `status_message` if it sent one.
        case status(Int, serverMessage: String?, retryAfter: Duration?)
        /// A response that is not the expected JSON, or not HTTP at all.
        case invalidResponse(status: Int?, detail: String)
        /// The request never got an HTTP answer.
        case transport(URLError.Code, host: String?, timeout: TimeInterval)
        /// The caller's task was cancelled.
        case cancelled
        /// The ``TokenProvider`` gave no token (it threw, or returned `nil`): no user is signed in.
        case noToken(String)
        /// amodb-proxy, not amodb, answered 401: the token sent to the proxy (or its absence)
        /// was refused, and amodb's key was never in question.
        case proxyRefused(ProxyCredential, serverMessage: String?)
        /// App Attest gave no proof on this device: the ``AppAttestationProvider`` failed
        /// (App Attest unsupported, Apple's service unavailable), with what it said.
        case attestationUnavailable(String)
        /// The proxy answered a step of the App Attest exchange with a status outside 2xx,
        /// with its `status_message` if it sent one.
        case attestationRefused(AttestStep, status: Int, serverMessage: String?, retryAfter: Duration?)
        /// The proxy's answer to a step of the App Attest exchange is not the expected JSON.
        case attestationUnreadable(AttestStep, status: Int, detail: String)
    }

    /// A step of the App Attest exchange, as ``AppAttestSession`` takes them.
    enum AttestStep: Sendable, Equatable {
        /// `GET …/attest/challenge`.
        case challenge
        /// `POST …/attest/keys`: a new key's attestation.
        case attestation
        /// `POST …/attest/session`: an assertion for a session token.
        case session

        /// The step, as a message names it.
        var phrase: String {
            switch self {
            case .challenge: "the request for an App Attest challenge"
            case .attestation: "the app's App Attest attestation"
            case .session: "the app's App Attest assertion"
            }
        }
    }

    /// What the client sent to the proxy that refused it.
    enum ProxyCredential: Sendable, Equatable {
        /// No token.
        case none
        /// A fixed token: the app's client token (`AMODB_PROXY_TOKENS`).
        case appToken
        /// A ``TokenProvider``'s token: a signed-in user's ID token.
        case userToken
    }

    /// The kind of failure; compare with `==` (new kinds may be added, so `switch` needs a `default`).
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        enum Code: String, Sendable {
            case invalidRequest, unauthorized, paymentRequired, notFound, rateLimited, clientError
            case serverError, unexpectedStatus, invalidResponse, offline, timedOut, transport, cancelled
            case attestationFailed
        }

        let code: Code

        /// The request could not be built: a parameter amodb would refuse, a bad id or base URL.
        public static let invalidRequest = Kind(code: .invalidRequest)
        /// 401: the key (or proxy token) is missing, wrong or suspended. Never retried.
        public static let unauthorized = Kind(code: .unauthorized)
        /// 402: the amodb plan has expired.
        public static let paymentRequired = Kind(code: .paymentRequired)
        /// 404: no such movie, or a path amodb does not serve.
        public static let notFound = Kind(code: .notFound)
        /// 429: still over the per-minute limit after the allowed retries.
        public static let rateLimited = Kind(code: .rateLimited)
        /// Any other 4xx status.
        public static let clientError = Kind(code: .clientError)
        /// A 5xx status: a failure on the server's side; a refresh may help.
        public static let serverError = Kind(code: .serverError)
        /// A 1xx or 3xx status the client cannot use.
        public static let unexpectedStatus = Kind(code: .unexpectedStatus)
        /// A success status whose body is not the expected JSON, or a non-HTTP response.
        public static let invalidResponse = Kind(code: .invalidResponse)
        /// No connection: offline, host not found, connection refused or lost.
        public static let offline = Kind(code: .offline)
        /// The server did not answer within the timeout.
        public static let timedOut = Kind(code: .timedOut)
        /// Any other transport failure (TLS, malformed URL, …).
        public static let transport = Kind(code: .transport)
        /// The calling task was cancelled.
        public static let cancelled = Kind(code: .cancelled)
        /// App Attest gave no session: the device could not attest or assert (App Attest
        /// unsupported, say), or the proxy refused the proof or does not offer App Attest.
        /// ``AppAttestSession`` does not ask again until a pause has passed.
        public static let attestationFailed = Kind(code: .attestationFailed)

        /// The kind's name, e.g. `unauthorized`.
        public var description: String { code.rawValue }
    }

    let reason: Reason

    init(_ reason: Reason) {
        self.reason = reason
    }

    /// The kind of failure.
    public var kind: Kind {
        switch reason {
        case .invalidRequest: .invalidRequest
        case .status(let status, _, _):
            switch status {
            case 401: .unauthorized
            case 402: .paymentRequired
            case 404: .notFound
            case 429: .rateLimited
            case 400...499: .clientError
            case 500...599: .serverError
            default: .unexpectedStatus
            }
        case .invalidResponse: .invalidResponse
        case .transport(let code, _, _): Self.kind(of: code)
        case .cancelled: .cancelled
        case .noToken, .proxyRefused: .unauthorized
        case .attestationUnavailable: .attestationFailed
        case .attestationRefused(_, let status, _, _):
            switch status {
            case 429: .rateLimited
            case 500...599: .serverError
            default: .attestationFailed
            }
        case .attestationUnreadable: .invalidResponse
        }
    }

    /// The HTTP status, when the server answered.
    public var status: Int? {
        switch reason {
        case .status(let status, _, _): status
        case .invalidResponse(let status, _): status
        case .proxyRefused: 401
        case .attestationRefused(_, let status, _, _): status
        case .attestationUnreadable(_, let status, _): status
        case .invalidRequest, .transport, .cancelled, .noToken, .attestationUnavailable: nil
        }
    }

    /// For ``Kind-swift.struct/rateLimited`` (and a 503 from the App Attest exchange): the wait
    /// the server's last `Retry-After` asked for (uncapped), or `nil` when it sent none.
    public var retryAfter: Duration? {
        if case .status(_, _, let retryAfter) = reason { return retryAfter }
        if case .attestationRefused(_, _, _, let retryAfter) = reason { return retryAfter }
        return nil
    }

    /// The `status_message` of amodb's (or the proxy's) JSON error body, if there was one.
    /// Any occurrence of the bearer token is already replaced by `<redacted>`.
    public var serverMessage: String? {
        if case .status(_, let message, _) = reason { return message }
        if case .proxyRefused(_, let message) = reason { return message }
        if case .attestationRefused(_, _, let message, _) = reason { return message }
        return nil
    }

    /// For transport failures: the `URLError` code URLSession reported.
    public var urlErrorCode: URLError.Code? {
        if case .transport(let code, _, _) = reason { return code }
        return nil
    }

    /// `true` when the same call may succeed later (429, 5xx, offline, timed out), so an
    /// app can offer a refresh.
    public var isTransient: Bool {
        [.rateLimited, .serverError, .offline, .timedOut].contains(kind)
    }

    /// A sentence an app can show, e.g. `amodb rejected the API key (401): Invalid API key.`
    /// Never contains the bearer token.
    public var message: String {
        switch reason {
        case .invalidRequest(let problem):
            return problem
        case .status(let status, let serverMessage, let retryAfter):
            let detail = serverMessage.map { ": \($0)" } ?? ""
            switch kind {
            case .unauthorized:
                return Self.sentence("amodb rejected the API key (\(status))\(detail)")
            case .paymentRequired:
                return Self.sentence("The amodb plan has expired (\(status))\(detail)")
            case .notFound:
                return Self.sentence("Not found (\(status))\(detail)")
            case .rateLimited:
                let wait = retryAfter.map { " Try again in \(Self.seconds($0)) s." } ?? " Try again in a minute."
                return Self.sentence("Too many requests to amodb (\(status))\(detail)") + wait
            case .clientError:
                return Self.sentence("amodb refused the request (\(status))\(detail)")
            case .serverError:
                return Self.sentence("amodb failed to answer (\(status))\(detail)") + " Try again later."
            default:
                return Self.sentence("Unexpected HTTP status from amodb (\(status))\(detail)")
            }
        case .invalidResponse(let status, let detail):
            let code = status.map { " (\($0))" } ?? ""
            return Self.sentence("amodb sent a response that could not be read\(code): \(detail)")
        case .transport(let code, let host, let timeout):
            let server = host.map { "the server \($0)" } ?? "the server"
            switch code {
            case .timedOut:
                return "\(Self.capitalized(server)) did not answer within \(Self.seconds(.seconds(timeout))) s."
            case .cannotFindHost, .dnsLookupFailed:
                return "Cannot find \(server). Check your connection."
            case .cannotConnectToHost:
                return "Cannot connect to \(server)."
            case .networkConnectionLost:
                return "The network connection was lost."
            case .notConnectedToInternet, .internationalRoamingOff, .dataNotAllowed, .callIsActive:
                return "You appear to be offline."
            case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
                .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot:
                return "A secure connection to \(server) could not be made."
            default:
                return "The request to \(server) failed (URL error \(code.rawValue))."
            }
        case .cancelled:
            return "The request was cancelled."
        case .noToken(let problem):
            return Self.sentence("No sign-in token to send: \(problem)")
        case .proxyRefused(let credential, let serverMessage):
            let detail = serverMessage.map { ": \($0)" } ?? ""
            switch credential {
            case .none: return Self.sentence("The proxy requires a token, and none was sent (401)\(detail)")
            case .appToken: return Self.sentence("The proxy refused the app's client token (401)\(detail)")
            case .userToken: return Self.sentence("The proxy refused the user's sign-in token (401)\(detail)")
            }
        case .attestationUnavailable(let problem):
            return Self.sentence("App Attest could not vouch for this app: \(problem)")
        case .attestationRefused(let step, let status, let serverMessage, let retryAfter):
            let detail = serverMessage.map { ": \($0)" } ?? ""
            switch status {
            case 404:
                return Self.sentence("The proxy does not offer App Attest (\(status))\(detail)")
            case 429:
                let wait = retryAfter.map { " Try again in \(Self.seconds($0)) s." } ?? " Try again in a minute."
                return Self.sentence("Too many requests to the proxy for App Attest (\(status))\(detail)") + wait
            case 500...599:
                return Self.sentence("The proxy failed to answer \(step.phrase) (\(status))\(detail)")
                    + " Try again later."
            default:
                return Self.sentence("The proxy refused \(step.phrase) (\(status))\(detail)")
            }
        case .attestationUnreadable(let step, let status, let detail):
            return Self.sentence("The proxy's answer to \(step.phrase) could not be read (\(status)): \(detail)")
        }
    }

    /// The ``message``.
    public var description: String { message }

    /// The ``message``, so `localizedDescription` (what alerts show) reads well too.
    public var errorDescription: String? { message }

    /// How a URLSession error code is classified.
    static func kind(of code: URLError.Code) -> Kind {
        switch code {
        case .timedOut:
            .timedOut
        case .notConnectedToInternet, .cannotConnectToHost, .cannotFindHost, .networkConnectionLost,
            .dnsLookupFailed, .internationalRoamingOff, .dataNotAllowed, .callIsActive:
            .offline
        case .cancelled:
            .cancelled
        default:
            .transport
        }
    }

    /// Ends `text` with a full stop unless it already ends a sentence.
    private static func sentence(_ text: String) -> String {
        guard let last = text.last, !".!?".contains(last) else { return text }
        return text + "."
    }

    private static func capitalized(_ text: String) -> String {
        text.prefix(1).uppercased() + text.dropFirst()
    }

    /// Whole seconds, rounded up: `Retry-After` and timeouts are shown in seconds.
    private static func seconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return Int(seconds) + (attoseconds > 0 ? 1 : 0)
    }
}
