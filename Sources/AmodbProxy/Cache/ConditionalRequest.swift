import AmodbHTTP

/// `If-None-Match` (RFC 9110 §13.1.2): a stored 200 whose tag the client already has is
/// answered 304 without a body (RFC 9110 §15.4.5), keeping its validator and freshness.
enum ConditionalRequest {
    /// `response` as the client should get it, given the tags it sent (if any).
    static func apply(ifNoneMatch: String?, to response: HTTPResponse) -> HTTPResponse {
        guard response.status == 200, let ifNoneMatch, let etag = response.headers["ETag"] else { return response }
        let matches = ifNoneMatch.split(separator: ",").contains {
            let tag = $0.trimmingSpaces()
            return tag == "*" || tag == etag || tag == "W/" + etag
        }
        guard matches else { return response }
        var notModified = response
        notModified.status = 304
        notModified.body = []
        notModified.headers.remove("Content-Type")
        return notModified
    }
}
