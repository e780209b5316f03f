import AmodbCompression
import AmodbHTTP
import AmodbModels

/// What the proxy reads from a request's head before answering it: who is asking, which
/// route, which amodb request and its cache key, which codings and validator the client
/// sends. Read once per request, from the head's bytes where it can (the route, the query).
struct HeadFacts: Sendable {
    /// The caller's address: the peer's, or from `X-Forwarded-For` when the peer is trusted.
    let address: String
    /// Whether the path is under the API root (`/3/…`).
    let underAPI: Bool
    /// The metrics label of the path.
    let route: ProxyMetrics.RouteLabel
    /// The path as the access log and the unserved path's 404 name it (`LoggedPath`): only
    /// for a path no route names.
    let loggedPath: String?
    /// Whether the client's address is limited (not in the exempt set).
    let limitedByAddress: Bool
    /// The amodb request the path and query name, or why they name none that is valid;
    /// `nil` when the path is no forwarded route.
    let amodbRequest: Result<AmodbRequest, RequestError>?
    /// The key a valid amodb request is cached under: made once, for the cache and the access log.
    let key: CacheKey?
    let accept: AcceptEncoding
    let ifNoneMatch: String?
    /// Whether CORS applies: with origins set, to every answer but the operator's pages'
    /// (`/metrics`, `/status`, `/status.json`: for the operator's scraper and browser, not for
    /// apps' pages), so that a page can read each error it gets.
    let corsApplies: Bool
    /// `Origin`, read only when CORS applies.
    let origin: String?

    init(_ request: borrowing HTTPRequest, access: ProxyResponder.Access, languages: [String]) {
        // `X-Forwarded-For` is read only from a trusted peer (most proxies trust none).
        let peer = request.peerAddress
        address =
            access.trustedProxies.mayForward(peer)
            ? access.trustedProxies.clientAddress(peer: peer, forwardedFor: request.headers.values("X-Forwarded-For"))
            : peer
        let (underAPI, amodbRoute) = RouteRequest.route(for: request.path)
        self.underAPI = underAPI
        route = ProxyResponder.routeLabel(for: request.path, route: amodbRoute)
        loggedPath = route == .unmatched ? LoggedPath.of(target: request.target) : nil
        limitedByAddress = !access.rateLimitExempt.contains(address)
        // amodb answers an untranslated language (or none) in English: one entry for all of
        // them, resolved while the query's bytes are read.
        amodbRequest = amodbRoute.map { RouteRequest.request($0, query: request.query, languages: languages) }
        key = (try? amodbRequest?.get()).map(CacheKey.init)
        accept = AcceptEncoding(fields: request.headers.fields)
        ifNoneMatch = request.headers["If-None-Match"]
        corsApplies = access.cors != nil && !route.isOperatorPage
        origin = corsApplies ? request.headers["Origin"] : nil
    }
}
