extension ContentCoding {
    /// The coding a `Content-Encoding` field value names (RFC 9110 §8.4), for a body
    /// received from amodb: names ignore case and surrounding whitespace, `x-gzip` is
    /// gzip, and an empty value or `identity` is identity. `nil` for a coding this
    /// module cannot decode (`deflate`, `zstd`, …) and for a list of several codings
    /// (`gzip, br`): such a body cannot be read, so it is not an answer to store.
    public init?(contentEncoding: String) {
        var value = Substring(contentEncoding)
        while let first = value.first, first == " " || first == "\t" { value.removeFirst() }
        while let last = value.last, last == " " || last == "\t" { value.removeLast() }
        switch value.lowercased() {
        case "", "identity": self = .identity
        case "gzip", "x-gzip": self = .gzip
        case "br": self = .br
        default: return nil
        }
    }
}
