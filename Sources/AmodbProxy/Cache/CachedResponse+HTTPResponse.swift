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
        // What is sent, each decided once (`let`s, not variables changed in place: see
        // `HTTPResponse.init`).
        let variant: (bytes: [UInt8], tags: (gzip: String, br: String))? =
            coding == .identity ? nil : variants?.bytes(for: coding).flatMap { bytes in variantTags.map { (bytes, $0) } }
        let tag: String? = status != 200 ? nil : variant.map { coding == .gzip ? $0.tags.gzip : $0.tags.br } ?? etag
        let notModified = if let tag, let ifNoneMatch { ConditionalRequest.matches(ifNoneMatch, etag: tag) } else { false }
        let answerStatus = notModified ? 304 : status
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
        return HTTPResponse(
            status: answerStatus, renderedFields: fields, body: notModified ? [] : variant?.bytes ?? body,
            contentEncoding: variant == nil ? nil : coding.contentEncoding, annotation: outcome.annotation)
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
