public import Foundation

#if canImport(FoundationNetworking)
    public import FoundationNetworking
#endif

/// A session with amodb-proxy earned by App Attest: it proves to the proxy that requests
/// come from a genuine copy of the app on a genuine Apple device, and hands ``AmodbClient``
/// the session token to send.
///
/// ```swift
/// let session = AppAttestSession(
///     baseURL: url, provider: DeviceCheckAttestation(), keyStore: KeychainAttestationKeyStore())
/// let client = AmodbClient(baseURL: url, tokenProvider: session.tokenProvider)
/// ```
///
/// The exchange: a one-time challenge from `…/attest/challenge`; a key made and attested
/// once (`…/attest/keys`), its id kept in the ``AppAttestationKeyStore``; then, for each
/// session, an assertion over a fresh challenge (`…/attest/session`) for a token sent as
/// `Authorization: Bearer …` until it ends. What it guarantees:
/// - A token is replaced before it ends: within five minutes of its end, or a tenth of its
///   life when that is shorter. Its life is counted from when the session was asked, so the
///   session never thinks a token lives longer than the proxy does.
/// - Callers at the same time share the one exchange in flight; none starts a second. An
///   exchange runs to its end for the callers that share it, even when one is cancelled.
/// - A forced refresh (the proxy refused the token) ends the session, unless the session
///   is only a few seconds old: the requests refused together, for the token they all
///   held, then share the one new session rather than each asking for another.
/// - A key the proxy does not know (`status_code` 1001), or one the device no longer has,
///   is replaced by a new key, attested, once per exchange; no key is attested twice.
/// - A refusal (of the proof, or App Attest not offered) is not asked again for a minute,
///   nor a 429 or 503 before its `Retry-After` (ten minutes at most): an app's requests
///   never make a loop of exchanges. Meanwhile, a token that has not yet ended is still
///   handed out, and so it is when its replacement fails.
/// - Failures are ``AmodbClientError``s; none contains a token.
public actor AppAttestSession {
    /// A session token, and when to replace it, on the session's clock.
    struct Issued: Sendable {
        /// The token; never printed.
        let token: BearerToken
        /// When the exchange that earned it ended.
        let receivedAt: Duration
        /// When to ask for the next one.
        let renewAt: Duration
        /// When the proxy stops accepting it, at the latest.
        let expiresAt: Duration
    }

    /// A failed exchange, given again to callers until `until` instead of asking the proxy.
    private struct Pause {
        let error: AmodbClientError
        let until: Duration
    }

    /// The most time before a token's end at which the next one is asked for.
    static let renewalMargin: Duration = .seconds(300)
    /// How old a session may be and still be given to a forced refresh, rather than replaced.
    static let forcedRefreshGrace: Duration = .seconds(10)
    /// How long a refusal is given again without asking the proxy.
    static let refusalPause: Duration = .seconds(60)
    /// The longest pause a `Retry-After` is obeyed for.
    static let longestPause: Duration = .seconds(600)

    /// The App Attest endpoints beside the base URL, or why there are none.
    let endpoints: Result<AttestEndpoints, AmodbClientError>
    /// What the device does.
    let provider: any AppAttestationProvider
    /// Where the attested key's id is kept.
    let keyStore: any AppAttestationKeyStore
    /// The session the exchange's requests go through.
    let urlSession: URLSession
    /// Per-request timeout, in seconds.
    let timeout: TimeInterval
    /// Time since this session was made, on the clock it was given.
    let now: @Sendable () -> Duration

    private var current: Issued?
    private var inFlight: Task<Result<Issued, AmodbClientError>, Never>?
    private var pause: Pause?

    /// Makes a session; nothing is sent until the first token is asked for.
    /// - Parameters:
    ///   - baseURL: the API root given to ``AmodbClient``, e.g. `https://proxy.example.com/3`;
    ///     App Attest is served beside it, at `https://proxy.example.com/attest/…`.
    ///   - provider: what the device does (``DeviceCheckAttestation`` on Apple devices).
    ///   - keyStore: where the attested key's id is kept across launches
    ///     (``KeychainAttestationKeyStore`` on Apple devices).
    ///   - session: the URLSession for the exchange's requests.
    ///   - timeout: per-request timeout, in seconds.
    ///   - clock: what token lifetimes are measured on; tests give one they move by hand.
    public init(
        baseURL: URL, provider: any AppAttestationProvider, keyStore: any AppAttestationKeyStore,
        session: URLSession = .shared, timeout: TimeInterval = 10, clock: some Clock<Duration> = ContinuousClock()
    ) {
        endpoints = Result { () throws(AmodbClientError) in try AttestEndpoints(baseURL: baseURL) }
        self.provider = provider
        self.keyStore = keyStore
        urlSession = session
        self.timeout = timeout
        let start = clock.now
        now = { start.duration(to: clock.now) }
    }

    /// The ``TokenProvider`` to make ``AmodbClient`` with: each request asks it for the
    /// current token, and a request whose token the proxy refused asks with `forceRefresh`.
    public nonisolated var tokenProvider: TokenProvider {
        { [self] forceRefresh in try await self.token(forceRefresh: forceRefresh) }
    }

    /// The session token to send now: the current one, or one from a new exchange.
    /// - Parameter forceRefresh: `true` when the proxy refused the last token: a new
    ///   session is asked for (unless the current one is only a few seconds old).
    public func token(forceRefresh: Bool = false) async throws(AmodbClientError) -> String {
        if Task.isCancelled { throw AmodbClientError(.cancelled) }
        let now = now()
        if let current {
            if forceRefresh {
                if now - current.receivedAt < Self.forcedRefreshGrace { return current.token.value }
                self.current = nil
            } else if now < current.renewAt {
                return current.token.value
            }
        }
        if inFlight == nil, let pause, now < pause.until {
            if let current, now < current.expiresAt { return current.token.value }
            throw pause.error
        }
        switch await exchange().value {
        case .success(let issued):
            return issued.token.value
        case .failure(let error):
            if let current, self.now() < current.expiresAt { return current.token.value }
            throw error
        }
    }

    /// The exchange in flight, or a new one.
    private func exchange() -> Task<Result<Issued, AmodbClientError>, Never> {
        if let inFlight { return inFlight }
        let task = Task { await runExchange() }
        inFlight = task
        return task
    }

    /// Runs one exchange and keeps what it gave: the session, or the pause its failure asks.
    private func runExchange() async -> Result<Issued, AmodbClientError> {
        let result: Result<Issued, AmodbClientError>
        do {
            result = .success(try await newSession())
        } catch {
            result = .failure(error)
        }
        inFlight = nil
        switch result {
        case .success(let issued):
            current = issued
            pause = nil
        case .failure(let error):
            pause = Self.pause(after: error).map { Pause(error: error, until: now() + $0) }
        }
        return result
    }

    /// How long a failed exchange is given again without asking the proxy: what its
    /// `Retry-After` asks (at most ``longestPause``), a minute for a refusal, else not at
    /// all (a lost connection may be back at the next request).
    static func pause(after error: AmodbClientError) -> Duration? {
        if let retryAfter = error.retryAfter { return min(retryAfter, longestPause) }
        return error.kind == .attestationFailed ? refusalPause : nil
    }
}
