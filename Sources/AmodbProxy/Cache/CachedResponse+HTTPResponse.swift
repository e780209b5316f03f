import AmodbCompression
import AmodbHTTP

extension CachedResponse {
    /// This entry as an answer in the coding `accept` prefers among the variants it has:
    /// the body, its age and remaining freshness, its validator, and how the cache served it.
    /// Every such answer says `Vary: Accept-Encoding`, identity included, since another
    /// client may get another variant of it. A 200 whose codings the client all refuses
    /// (`identity;q=0` and no variant it takes) is a 406.
    func response(at now: Double, outcome: CacheOutcome, accept: AcceptEncoding = AcceptEncoding()) -> HTTPResponse {
        let coding: ContentCoding
        switch accept.negotiate(available: variants?.available ?? .identity) {
        case .send(let chosen): coding = chosen
        case .notAcceptable where status == 200: return Self.notAcceptable(outcome: outcome)
        case .notAcceptable: coding = .identity   // a short negative entry: sent as it is
        }
        var headers = HTTPHeaders()
        headers.add("Content-Type", "application/json;charset=utf-8")
        headers.add("Cache-Control", "public, max-age=\(max(0, remainingLifetime(at: now)))")
        headers.add("Age", String(age(at: now)))
        headers.add("Vary", "Accept-Encoding")
        var body = body
        if coding != .identity, let variants, let tags = variantTags, let bytes = variants.bytes(for: coding) {
            body = bytes
            headers.add("Content-Encoding", coding == .gzip ? "gzip" : "br")
            if status == 200 { headers.add("ETag", coding == .gzip ? tags.gzip : tags.br) }
        } else if status == 200 {
            headers.add("ETag", etag)
        }
        var response = HTTPResponse(status: status, headers: headers, body: body)
        response.cacheOutcome = outcome
        return response
    }

    /// The 406 for a client that refuses every coding the answer has; the proxy's own
    /// short error, so identity.
    private static func notAcceptable(outcome: CacheOutcome) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add("Vary", "Accept-Encoding")
        var response = HTTPResponse.error(
            406, "None of the codings in Accept-Encoding is available: accept identity, gzip or br.", headers: headers)
        response.cacheOutcome = outcome
        return response
    }
}
