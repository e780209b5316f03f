import AmodbCompression
import AmodbHTTP
import AmodbModels

/// What the proxy reads from a request's head before answering it: who is asking, which
/// route, which amodb request, which codings and validator the client sends.
///
/// Each is a function of the head's bytes, the connection's peer and the configuration,
/// none of which changes while the connection lives: a request repeating the head byte for
/// byte finds them in its `HeadMemo` and reads none of them again. What does change from
/// request to request (the client's token, its rate) is checked per request, not kept here.
final class HeadFacts: Sendable {
    /// The client's address: the peer's, or from `X-Forwarded-For` when the peer is trusted.
    let client: String
    /// Whether the path is under the API root (`/3/…`).
    let underAPI: Bool
    /// The metrics label of the path.
    let route: ProxyMetrics.RouteLabel
    /// Whether the client's address is limited (not in the exempt set).
    let limitedByAddress: Bool
    /// The amodb request the path and query name, or why they name none that is valid;
    /// `nil` when the path is no forwarded route.
    let amodbRequest: Result<AmodbRequest, RequestError>?
    let accept: AcceptEncoding
    let ifNoneMatch: String?
    /// `Origin`, read only when CORS applies to the route.
    let origin: String?
    /// The access-log line's fields from the request (method, route, path or key, client),
    /// rendered once; `nil` without an access log.
    let logFields: AccessLog.RequestFields?

    init(_ request: borrowing HTTPRequest, access: ProxyResponder.Access, languages: [String], accessLog: AccessLog?) {
        // `X-Forwarded-For` is read only from a trusted peer (most proxies trust none).
        let peer = request.peerAddress
        client =
            access.trustedProxies.mayForward(peer)
            ? access.trustedProxies.clientAddress(peer: peer, forwardedFor: request.headers.values("X-Forwarded-For")) : peer
        let (underAPI, amodbRoute) = ProxyResponder.route(for: request.path)
        self.underAPI = underAPI
        route = ProxyResponder.routeLabel(for: request.path, route: amodbRoute)
        limitedByAddress = !access.rateLimitExempt.contains(client)
        amodbRequest = amodbRoute.map { amodbRoute in
            // amodb answers an untranslated language (or none) in English: one entry for all of them.
            Result { () throws(RequestError) in
                try AmodbRequest(route: amodbRoute, query: request.query).resolvingLanguage(among: languages)
            }
        }
        accept = AcceptEncoding(fields: request.headers.fields)
        ifNoneMatch = request.headers["If-None-Match"]
        origin = access.cors != nil && route.isForwarded ? request.headers["Origin"] : nil
        // The path as logged: only for a route that matched none (others are logged by route).
        let loggedPath = route == .unmatched ? LoggedPath.of(target: request.target) : nil
        // The key the forwarder caches a valid request under (after the language is
        // resolved): canonical, so it holds no text of the client's query but known values.
        let key = accessLog == nil ? nil : try? amodbRequest?.get().pathAndQuery
        logFields = accessLog?.requestFields(method: request.method, route: route, path: loggedPath, key: key, client: client)
    }
}
