import AmodbCompression
import AmodbHTTP
import AmodbModels

/// What a request is known to be: read once from its head (the route, the canonical amodb
/// request and its cache key, the codings and validator the client sends, whether CORS
/// applies), then who calls (`IdentifyCaller`), and when it began and on which event loop.
/// The one value every stage of the way through the proxy reads (`ProxyDriver`), and what
/// delivering its answer needs: no copy of the request is kept.
struct RequestContext: Sendable {
    let method: String
    /// Whether the path is under the API root (`/3/…`).
    let underAPI: Bool
    /// The metrics label of the path.
    let label: ProxyMetrics.RouteLabel
    /// The proxy's own route the path names, if any (`OwnRoute`).
    let own: OwnRoute?
    /// The path as the access log and the unserved path's 404 name it (`LoggedPath`): only
    /// for a path no route names.
    let loggedPath: String?
    /// The question for the cache a valid amodb request is: the request in canonical form,
    /// its key (made once, for the cache and the access log), what the client accepts and
    /// holds; the caller's limit key is set once the caller is known (`Admit`). `nil` when
    /// the path is no route served, or its query names no valid request (`problem`).
    var query: CacheQuery?
    /// Why the query names no valid amodb request, for a route served.
    let problem: RequestError?
    /// Whether CORS applies: with origins set, to every answer but the operator's pages'
    /// (`/metrics`, `/status`, `/status.json`: for the operator's scraper and browser, not for
    /// apps' pages), so that a page can read each error it gets.
    let corsApplies: Bool
    /// `Origin`, read only when CORS applies.
    let origin: String?
    /// Who calls: its address first, then (`IdentifyCaller`) what it showed.
    var caller: Caller
    /// The listener it came in through: the public port or the operator's.
    let door: ProxyDriver.Door
    /// When the request's head was complete (`Clocks.uptimeNanoseconds`).
    let started: UInt64
    /// The event loop the answer is given on, while it is given on that loop's queue: counted
    /// in that loop's lane; `nil` once it is delivered elsewhere (the shared lane).
    var loop: Int?

    /// Whether the request is a `HEAD` (its answer's body bytes are not sent).
    var isHead: Bool { method == "HEAD" }

    /// Whether the answer gets its CORS fields: CORS applies, and it is no preflight
    /// (whose answer has its own).
    var decorates: Bool { corsApplies && method != "OPTIONS" }

    /// The request's facts, read from its head's bytes where it can (the route, the query).
    init(
        _ request: borrowing HTTPRequest, access: ProxyDriver.Access, languages: [String], started: UInt64,
        loop: Int?, door: ProxyDriver.Door = .api
    ) {
        // Each field is read into a local first and stored once, at the end: stored as it is
        // read, the context was built aside and copied out whole.
        // `X-Forwarded-For` is read only from a trusted peer (most proxies trust none).
        let peer = request.peerAddress
        let address =
            access.trustedProxies.mayForward(peer)
            ? access.trustedProxies.clientAddress(peer: peer, forwardedFor: request.headers.values("X-Forwarded-For"))
            : peer
        // A route that is off is no route: its path is answered as any other unserved one.
        // The operator's port serves no API: any path there is one of its pages, or none.
        let (underAPI, matched) = door == .api ? RouteRequest.route(for: request.path) : (false, nil)
        let amodbRoute = matched.flatMap { access.routes.serves($0) ? $0 : nil }
        let own =
            amodbRoute == nil
            ? OwnRoute(path: request.path).flatMap { access.operatorPages.serves($0, through: door) ? $0 : nil } : nil
        let label = amodbRoute.map(ProxyMetrics.RouteLabel.init) ?? own?.label ?? .unmatched
        // amodb answers an untranslated language (or none) in English: one entry for all of
        // them, resolved while the query's bytes are read.
        var query: CacheQuery? = nil
        var problem: RequestError? = nil
        if let amodbRoute {
            switch RouteRequest.request(amodbRoute, query: request.query, languages: languages) {
            case .success(let amodbRequest):
                query = CacheQuery(
                    request: amodbRequest, key: CacheKey(amodbRequest), limitKey: nil,
                    accept: AcceptEncoding(fields: request.headers.fields),
                    ifNoneMatch: request.headers["If-None-Match"], loop: loop)
            case .failure(let error):
                problem = error
            }
        }
        let corsApplies = access.cors != nil && own?.isOperatorPage != true
        self.method = request.method
        self.underAPI = underAPI
        self.label = label
        self.own = own
        self.loggedPath = label == .unmatched ? LoggedPath.of(target: request.target) : nil
        self.query = query
        self.problem = problem
        self.corsApplies = corsApplies
        self.origin = corsApplies ? request.headers["Origin"] : nil
        self.caller = Caller(
            address: address, limitedByAddress: !access.rateLimitExempt.contains(address), network: access.network)
        self.door = door
        self.started = started
        self.loop = loop
    }
}

/// What the cache stages read of a request: its amodb request and cache key, whose share of
/// the calls a miss spends, what the client accepts and holds, and where it is counted.
/// Made from a `RequestContext` once the request is admitted, or by the planner's replay
/// and tests that ask the cache alone.
struct CacheQuery: Sendable {
    let request: AmodbRequest
    let key: CacheKey
    /// The caller's limit key (`Caller.limitKey`), whose share of the calls a miss spends;
    /// `nil`: no share applies.
    var limitKey: String?
    var accept = AcceptEncoding()
    var ifNoneMatch: String? = nil
    /// The event loop whose queue this runs on, if any, where a hit is counted.
    var loop: Int? = nil
}
