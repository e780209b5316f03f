import AmodbCompression
import AmodbHTTP

extension CachedResponse {
    /// This entry as an answer in the coding `accept` prefers among the variants it has:
    /// the body, its age and remaining freshness, its validator, and how the cache served it.
    /// Every such answer says `Vary: Accept-Encoding`, identity included, since another
    /// client may get another variant of it. A 200 whose codings the client all refuses
    /// (`identity;q=0` and no variant it takes) is a 406; a 200 whose tag, or any of its
    /// variants' tags, is in `ifNoneMatch` is a 304 with the tag it matched
    /// (`ConditionalRequest`).
    ///
    /// This runs for every hit, so its fields are rendered as bytes (`RenderedFields`): the
    /// lines that never change were rendered once per entry and coding (`Form`) and are
    /// shared, and only the two per-second numbers are written here, as digits.
    func answer(
        at now: Double, outcome: CacheOutcome, accept: AcceptEncoding = AcceptEncoding(), ifNoneMatch: String? = nil
    ) -> ProxyAnswer {
        var coding: ContentCoding
        switch accept.negotiate(available: variants?.available ?? .identity) {
        case .send(let chosen): coding = chosen
        case .notAcceptable where status == 200: return Self.notAcceptable(outcome: outcome)
        case .notAcceptable: coding = .identity  // a short negative entry: sent as it is
        }
        // Asked only of a request with a validator: a hit without one does no more work.
        var notModified = false
        if let ifNoneMatch, let confirmed = notModifiedCoding(ifNoneMatch, preferring: coding) {
            coding = confirmed
            notModified = true
        }
        let age = age(at: now)
        let freshFor = max(0, remainingLifetime(age: age))
        let status = status
        return withForm(coding) { form in
            // The constant fields are the form's, shared; this answer writes its per-second
            // ones, with room for the `Cache-Status` and CORS lines added after them (about
            // 90 and 160 bytes at most for an origin of 40), so that none of them reallocates.
            var fields = RenderedFields(
                shared: form.fields[(notModified ? form.afterContentType : 0)...], reservingCapacity: 320)
            fields.append { lines in
                lines.line("Cache-Control: public, max-age=", number: freshFor)
                lines.line("Age: ", number: age)
            }
            return ProxyAnswer(
                HTTPResponse(
                    status: notModified ? 304 : status, renderedFields: fields, body: notModified ? [] : form.body,
                    contentEncoding: form.coding.contentEncoding),
                cacheOutcome: outcome)
        }
    }

    /// The coding of the variant whose tag `ifNoneMatch` names, or `nil` if it names none:
    /// `preferred`'s (what this client would be sent) when it is named, or for `*`; else the
    /// first of identity, gzip and br that is. Every variant holds the same content, so a
    /// client holding any of them has the answer: one filled with gzip before br was made,
    /// or that now sends another `Accept-Encoding`, gets its own tag confirmed rather than
    /// the whole body again (RFC 9111 §4.3.4: the 304 updates the stored response with
    /// that tag). A negative entry has no tag and is never a 304.
    private func notModifiedCoding(_ ifNoneMatch: String, preferring preferred: ContentCoding) -> ContentCoding? {
        if let tag = tag(of: preferred), ConditionalRequest.matches(ifNoneMatch, etag: tag) { return preferred }
        for coding in ContentCoding.allCases where coding != preferred {
            if let tag = tag(of: coding), ConditionalRequest.matches(ifNoneMatch, etag: tag) { return coding }
        }
        return nil
    }

    private static func notAcceptable(outcome: CacheOutcome) -> ProxyAnswer {
        var headers = HTTPHeaders()
        headers.add("Vary", "Accept-Encoding")
        let response = APIRefusal(
            .notAcceptable, "None of the codings in Accept-Encoding is available: accept identity, gzip or br.",
            headers: headers
        ).response
        return ProxyAnswer(response, cacheOutcome: outcome)
    }
}
