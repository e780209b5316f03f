import AmodbHTTP

/// `If-None-Match` (RFC 9110 §13.1.2): a stored 200 whose tag the client already has is
/// answered 304 without a body (RFC 9110 §15.4.5), keeping its validator and freshness.
/// Decided on the typed tag of the variant being sent, before any field is rendered.
enum ConditionalRequest {
    /// Whether the tags a client sent (`*`, or a list of strong or weak tags) name `etag`.
    static func matches(_ ifNoneMatch: String, etag: String) -> Bool {
        ifNoneMatch.split(separator: ",").contains {
            let tag = $0.trimmingSpaces()
            return tag == "*" || tag == etag || tag == "W/" + etag
        }
    }
}
