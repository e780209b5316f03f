public import AmodbModels
public import Foundation

#if canImport(FoundationNetworking)
    public import FoundationNetworking
#endif

/// An async/await client for amodb, or for the amodb-proxy in front of it (same paths).
///
/// Requests are built from ``AmodbModels/AmodbRequest`` so the client and the proxy agree
/// on paths and canonical queries by construction. Statuses are handled as amodb
/// documents: 401/402 surface at once, 429 waits `Retry-After` (capped) and retries a
/// few times, other failures become an ``AmodbClientError`` with a readable message.
///
/// The bearer token is fixed (an app token, or amodb's key) or asked of a
/// ``TokenProvider`` before each request: a signed-in user's current ID token. When the
/// proxy refuses a provider's token as invalid (401 with `error="invalid_token"`: expired,
/// say), the provider is asked once for a fresh one and the request is sent once more.
public struct AmodbClient: Sendable, CustomStringConvertible {
    /// The API root every path is relative to, e.g. `https://api.amodb.dev/3` or
    /// `http://127.0.0.1:8080/3`; it may carry a path prefix.
    public var baseURL: URL
    /// The session requests go through.
    public var session: URLSession
    /// Per-request timeout (`URLRequest.timeoutInterval`), in seconds.
    public var timeout: TimeInterval
    /// How many times a 429 is retried before ``AmodbClientError/Kind-swift.struct/rateLimited`` surfaces.
    public var maxRateLimitRetries: Int
    /// The longest wait before retrying a 429, in seconds, whatever `Retry-After` asks for.
    public var retryAfterCap: TimeInterval
    /// What is sent as `Authorization: Bearer …`; redacted wherever it could be printed.
    let credential: Credential
    /// Waits between 429 retries; tests inject one that records instead of sleeping.
    let sleep: @Sendable (Duration) async throws -> Void

    /// Makes a client.
    /// - Parameters:
    ///   - baseURL: the API root, e.g. `https://api.amodb.dev/3`.
    ///   - bearerToken: the amodb key (calling amodb directly) or a proxy client token;
    ///     sent as `Authorization: Bearer <token>`, never shown in errors.
    ///   - session: defaults to ``defaultSession`` (ephemeral, no local HTTP cache).
    ///   - timeout: per-request timeout, in seconds (amodb's guidance is 10).
    ///   - maxRateLimitRetries: retries after a 429 (amodb's guidance is at most 2).
    ///   - retryAfterCap: the longest wait before a retry, in seconds (amodb's guidance is 30).
    ///   - sleep: how to wait before a retry; defaults to `Task.sleep(for:)`.
    public init(
        baseURL: URL,
        bearerToken: String? = nil,
        session: URLSession = AmodbClient.defaultSession,
        timeout: TimeInterval = 10,
        maxRateLimitRetries: Int = 2,
        retryAfterCap: TimeInterval = 30,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.init(
            baseURL: baseURL, credential: bearerToken.map { .fixed(BearerToken(value: $0)) } ?? .none, session: session,
            timeout: timeout,
            maxRateLimitRetries: maxRateLimitRetries, retryAfterCap: retryAfterCap, sleep: sleep)
    }

    /// Makes a client whose bearer token comes from `tokenProvider`, asked before each
    /// request (with `forceRefresh` false) and, after the server refused its token as
    /// invalid, once more with `forceRefresh` true before a single retry. Other
    /// parameters as in ``init(baseURL:bearerToken:session:timeout:maxRateLimitRetries:retryAfterCap:sleep:)``.
    public init(
        baseURL: URL,
        tokenProvider: @escaping TokenProvider,
        session: URLSession = AmodbClient.defaultSession,
        timeout: TimeInterval = 10,
        maxRateLimitRetries: Int = 2,
        retryAfterCap: TimeInterval = 30,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.init(
            baseURL: baseURL, credential: .provider(tokenProvider), session: session, timeout: timeout,
            maxRateLimitRetries: maxRateLimitRetries, retryAfterCap: retryAfterCap, sleep: sleep)
    }

    private init(
        baseURL: URL, credential: Credential, session: URLSession, timeout: TimeInterval, maxRateLimitRetries: Int,
        retryAfterCap: TimeInterval, sleep: @escaping @Sendable (Duration) async throws -> Void
    ) {
        self.baseURL = baseURL
        self.credential = credential
        self.session = session
        self.timeout = timeout
        self.maxRateLimitRetries = maxRateLimitRetries
        self.retryAfterCap = retryAfterCap
        self.sleep = sleep
    }

    /// The session used when none is given: ephemeral, without a local HTTP cache, so
    /// every call reaches the server (the proxy does the caching and reports it in
    /// `Cache-Status`).
    public static let defaultSession: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpShouldSetCookies = false
        return URLSession(configuration: configuration)
    }()

    /// The base URL and whether a token is set; never the token.
    public var description: String {
        let token =
            switch credential {
            case .none: "none"
            case .fixed: "<redacted>"
            case .provider: "<provider>"
            }
        return "AmodbClient(baseURL: \(baseURL.absoluteString), bearerToken: \(token))"
    }

    // MARK: Endpoints

    /// `GET /trending/{media_type}/{time_window}`: one page of what is trending.
    /// - Parameters:
    ///   - language: a language tag such as `de-DE` (normalized; `nil` for amodb's default).
    ///   - page: 1…500; `nil` for the first page.
    public func trending(
        _ media: MediaType, _ window: TimeWindow, language: String? = nil, page: Int? = nil
    ) async throws(AmodbClientError) -> TrendingPage {
        let request = try Self.validated { () throws(RequestError) in
            try AmodbRequest(route: .trending(media, window), language: language, page: page)
        }
        return try await send(request, as: TrendingPage.self)
    }

    /// `GET /movie/{movie_id}`: a movie's details, with the sub-resources named in
    /// `appendToResponse` (e.g. `["credits", "ratings"]`).
    public func movie(
        id: Int, language: String? = nil, appendToResponse: [String] = []
    ) async throws(AmodbClientError) -> MovieDetails {
        let request = try Self.validated { () throws(RequestError) in
            try AmodbRequest(route: .movie(id: id), language: language, appendToResponse: appendToResponse)
        }
        return try await send(request, as: MovieDetails.self)
    }

    /// `GET /configuration`: the image base URLs and sizes to build poster and backdrop URLs with.
    public func configuration() async throws(AmodbClientError) -> APIConfiguration {
        let request = try Self.validated { () throws(RequestError) in try AmodbRequest(route: .configuration) }
        return try await send(request, as: APIConfiguration.self)
    }

    /// `GET /movie/{popular|top_rated|now_playing|upcoming}`: one page of a movie list.
    /// - Parameters:
    ///   - language: a language tag such as `de-DE` (normalized; `nil` for amodb's default).
    ///   - page: 1…500; `nil` for the first page.
    public func movieList(
        _ list: MovieList, language: String? = nil, page: Int? = nil
    ) async throws(AmodbClientError) -> MoviePage {
        let request = try Self.validated { () throws(RequestError) in
            try AmodbRequest(route: .movieList(list), language: language, page: page)
        }
        return try await send(request, as: MoviePage.self)
    }

    /// `GET /tv/{tv_id}`: a show's details.
    public func tv(id: Int, language: String? = nil) async throws(AmodbClientError) -> TVDetails {
        let request = try Self.validated { () throws(RequestError) in
            try AmodbRequest(route: .tv(id: id), language: language)
        }
        return try await send(request, as: TVDetails.self)
    }

    /// `GET /person/{person_id}`: a person's details.
    public func person(id: Int, language: String? = nil) async throws(AmodbClientError) -> PersonDetails {
        let request = try Self.validated { () throws(RequestError) in
            try AmodbRequest(route: .person(id: id), language: language)
        }
        return try await send(request, as: PersonDetails.self)
    }

    /// `GET /genre/movie/list`: the movie genres' ids and names, to name a summary's `genreIds`.
    public func movieGenres(language: String? = nil) async throws(AmodbClientError) -> GenreList {
        let request = try Self.validated { () throws(RequestError) in
            try AmodbRequest(route: .movieGenres, language: language)
        }
        return try await send(request, as: GenreList.self)
    }

    /// `GET /search/movie?query=…`: one page of the movies whose titles match `text`.
    /// - Parameters:
    ///   - text: what to look for; sent in canonical form (`AmodbRequest.canonicalSearch`:
    ///     trimmed, runs of spaces as one, lower case), so an empty text, one with control
    ///     characters or one over `AmodbRequest.maxSearchBytes` fails here, unsent.
    ///   - language: a language tag such as `de-DE` (normalized; `nil` for amodb's default).
    ///   - page: 1…500; `nil` for the first page.
    public func searchMovies(
        _ text: String, language: String? = nil, page: Int? = nil
    ) async throws(AmodbClientError) -> MoviePage {
        let request = try Self.validated { () throws(RequestError) in
            try AmodbRequest(route: .searchMovie, language: language, page: page, search: text)
        }
        return try await send(request, as: MoviePage.self)
    }

    /// Sends `request` with full status handling and decodes the 2xx body as `T`.
    public func send<T: Decodable & Sendable>(
        _ request: AmodbRequest, as type: T.Type = T.self
    ) async throws(AmodbClientError) -> T {
        try await response(for: request).decode(as: type)
    }

    /// Sends `request` with full status handling (429 retries, errors for non-2xx) and
    /// returns the successful response undecoded, headers included (`Cache-Status`, `Age`).
    public func response(for request: AmodbRequest) async throws(AmodbClientError) -> AmodbResponse {
        try Self.checkRoute(of: request)
        var retries = 0
        var token = try await credential.token(forceRefresh: false)
        var refreshed = false
        while true {
            let response = try await exchange(pathAndQuery: request.pathAndQuery, token: token)
            if response.status == 429, retries < maxRateLimitRetries {
                retries += 1
                try await wait(for: response)
                continue
            }
            // RFC 6750 §3.1: the token was read and refused (expired, say); a provider can
            // hand out a fresh one. Once: a second refusal is not the token's age.
            if response.status == 401, !refreshed, credential.canRefresh, Self.refusesTokenAsInvalid(response) {
                refreshed = true
                token = try await credential.token(forceRefresh: true)
                continue
            }
            if let error = statusError(for: response, token: token) { throw error }
            return response
        }
    }

    /// Sends `request` once and returns whatever HTTP response comes back, any status,
    /// without retrying; throws only when there is no HTTP response.
    public func sendRaw(_ request: AmodbRequest) async throws(AmodbClientError) -> AmodbResponse {
        try await sendRaw(pathAndQuery: request.pathAndQuery)
    }

    /// Sends a GET for any path and query relative to ``baseURL`` (for tests and
    /// diagnostics, e.g. paths the proxy must refuse), once, returning any status.
    public func sendRaw(pathAndQuery: String) async throws(AmodbClientError) -> AmodbResponse {
        try await exchange(pathAndQuery: pathAndQuery, token: try await credential.token(forceRefresh: false))
    }

    // MARK: Helpers

    /// Turns a `RequestError` from building an ``AmodbModels/AmodbRequest`` into a client error.
    static func validated(
        _ build: () throws(RequestError) -> AmodbRequest
    ) throws(AmodbClientError) -> AmodbRequest {
        do {
            return try build()
        } catch {
            throw AmodbClientError(.invalidRequest(error.description))
        }
    }

    /// `Route.movie(id:)`, `.tv(id:)` and `.person(id:)` take any `Int`; only the ids the
    /// route table matches are sent, so a `-1` fails here rather than as a 404 from the server.
    static func checkRoute(of request: AmodbRequest) throws(AmodbClientError) {
        guard Route(path: request.route.path) == request.route else {
            throw AmodbClientError(
                .invalidRequest(
                    "Invalid request: \(request.route.path) is not a valid \(request.route.template) path."))
        }
    }

    /// Sleeps for the response's `Retry-After` (1 s when missing), at most ``retryAfterCap``.
    private func wait(for response: AmodbResponse) async throws(AmodbClientError) {
        let cap = Duration.seconds(max(0, retryAfterCap))
        let delay = min(RetryAfter.delay(response.headers["Retry-After"]) ?? .seconds(1), cap)
        do {
            try await sleep(delay)
        } catch {
            // Task.sleep only throws on cancellation; an injected sleep that throws means the same.
            throw AmodbClientError(.cancelled)
        }
    }

    /// Whether a 401 says the token itself was refused (`error="invalid_token"` in
    /// `WWW-Authenticate`, RFC 6750 §3), not that none was sent.
    static func refusesTokenAsInvalid(_ response: AmodbResponse) -> Bool {
        guard let challenge = response.headers["WWW-Authenticate"]?.lowercased() else { return false }
        return challenge.contains("error=\"invalid_token\"") || challenge.contains("error=invalid_token")
    }

    /// The error a non-2xx response stands for, or `nil` for a success; `token` (the one
    /// sent) is redacted from the server's message.
    func statusError(for response: AmodbResponse, token: BearerToken?) -> AmodbClientError? {
        guard !response.isSuccess else { return nil }
        let serverMessage = response.errorBody.flatMap { body -> String? in
            let text = body.statusMessage.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !text.isEmpty else { return nil }
            let redacted = token?.redacting(text) ?? text
            // A message is a sentence; a longer one is not something to put in front of a user.
            return redacted.count > 300 ? String(redacted.prefix(300)) + "…" : redacted
        }
        if response.status == 401, Self.isProxyChallenge(response) {
            let sent: AmodbClientError.ProxyCredential =
                switch credential {
                case _ where token == nil: .none
                case .provider: .userToken
                case .fixed, .none: .appToken
                }
            return AmodbClientError(.proxyRefused(sent, serverMessage: serverMessage))
        }
        let retryAfter = response.status == 429 ? RetryAfter.delay(response.headers["Retry-After"]) : nil
        return AmodbClientError(.status(response.status, serverMessage: serverMessage, retryAfter: retryAfter))
    }

    /// Whether a 401 comes from amodb-proxy (its challenge names the realm `amodb-proxy`,
    /// RFC 6750 §3) rather than from amodb, which sends no challenge: then the token sent
    /// to the proxy was refused, not amodb's key.
    static func isProxyChallenge(_ response: AmodbResponse) -> Bool {
        guard let challenge = response.headers["WWW-Authenticate"]?.lowercased() else { return false }
        return challenge.contains("realm=\"amodb-proxy\"") || challenge.contains("realm=amodb-proxy")
    }
}
