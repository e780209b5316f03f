import AmodbHTTP

/// `If-None-Match` (RFC 9110 §13.1.2): a stored 200 whose tag the client already has is
/// answered 304 without a body (RFC 9110 §15.4.5), keeping its validator and freshness.
/// Decided on the typed tags of the entry's variants, before any field is rendered.
enum ConditionalRequest {
    /// Whether the tags a client sent (`*`, or a list of strong or weak tags) name `etag`,
    /// compared weakly (§8.8.3.2), as `If-None-Match` is. Read in place, element by element:
    /// a revalidation may ask this of each of an entry's variants.
    static func matches(_ ifNoneMatch: String, etag: String) -> Bool {
        var rest = Substring(ifNoneMatch)
        while true {
            let comma = rest.utf8.firstIndex(of: UInt8(ascii: ",")) ?? rest.endIndex
            var tag = rest[..<comma].trimmingSpaces()
            if tag == "*" { return true }
            if tag.utf8.starts(with: "W/".utf8) { tag = tag.dropFirst(2) }
            if tag.utf8.elementsEqual(etag.utf8) { return true }
            guard comma < rest.endIndex else { return false }
            rest = rest[rest.utf8.index(after: comma)...]
        }
    }
}
