import AmodbCompression
import AmodbHTTP

extension CachedResponse {
    /// This entry as an answer in the coding `accept` prefers among the variants it has:
    /// the body, its age and remaining freshness, its validator, and how the cache served it.
    /// Every such answer says `Vary: Accept-Encoding`, identity included, since another
    /// client may get another variant of it. A 200 whose codings the client all refuses
    /// (`identity;q=0` and no variant it takes) is a 406; a 200 whose tag is in
    /// `ifNoneMatch` is a 304 (`ConditionalRequest`).
    ///
    /// This runs for every hit, so its fields are rendered as bytes (`RenderedFields`):
    /// the constant lines are copied from bytes made once, the numbers written as digits,
    /// the tag copied from the string stored with the entry.
    func response(
        at now: Double, outcome: CacheOutcome, accept: AcceptEncoding = AcceptEncoding(), ifNoneMatch: String? = nil
    ) -> HTTPResponse {
        let coding: ContentCoding
        switch accept.negotiate(available: variants?.available ?? .identity) {
        case .send(let chosen): coding = chosen
        case .notAcceptable where status == 200: return Self.notAcceptable(outcome: outcome)
        case .notAcceptable: coding = .identity   // a short negative entry: sent as it is
        }
        var body = body
        var tag: String? = status == 200 ? etag : nil
        var contentEncoding: String?
        if coding != .identity, let variants, let tags = variantTags, let bytes = variants.bytes(for: coding) {
            body = bytes
            contentEncoding = coding.contentEncoding
            if status == 200 { tag = coding == .gzip ? tags.gzip : tags.br }
        }
        var answerStatus = status
        if let tag, let ifNoneMatch, ConditionalRequest.matches(ifNoneMatch, etag: tag) {
            answerStatus = 304
            body = []
        }
        let age = age(at: now)
        let freshFor = max(0, remainingLifetime(age: age))
        // Room for the `Cache-Status` and CORS lines added after these, in the same allocation.
        var fields = RenderedFields(reservingCapacity: 320 + (tag?.utf8.count ?? 0))
        fields.append { lines in
            // The order of the fields as they always were: Content-Type (not on a 304, which
            // has no body), Cache-Control, Age, Vary, ETag.
            if answerStatus != 304 { lines.write("Content-Type: application/json;charset=utf-8\r\n") }
            lines.line("Cache-Control: public, max-age=", number: freshFor)
            lines.line("Age: ", number: age)
            lines.write("Vary: Accept-Encoding\r\n")
            if let tag { lines.line("ETag", tag) }
        }
        var response = HTTPResponse(status: answerStatus, body: body)
        response.renderedFields = fields
        response.contentEncoding = contentEncoding
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
