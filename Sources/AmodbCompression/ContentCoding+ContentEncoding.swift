import AmodbBytes

extension ContentCoding {
    /// The coding a `Content-Encoding` field value names (RFC 9110 §8.4), for a body
    /// received from amodb: names ignore case and surrounding whitespace, `x-gzip` is
    /// gzip, and an empty value or `identity` is identity. `nil` for a coding this
    /// module cannot decode (`deflate`, `zstd`, …) and for a list of several codings
    /// (`gzip, br`): such a body cannot be read, so it is not an answer to store.
    ///
    /// It also reads back the coding of every answer sent, for the metrics and the log:
    /// so it reads the bytes in place, with no string made.
    public init?(contentEncoding: String) {
        let coding: ContentCoding? = {
            let bytes = contentEncoding.utf8.span
            var start = 0
            var end = bytes.count
            while start < end, ASCIIBytes.isWhitespace(bytes[start]) { start += 1 }
            while end > start, ASCIIBytes.isWhitespace(bytes[end - 1]) { end -= 1 }
            if ASCIIBytes.equalsIgnoringCase(bytes, start, end, "br") { return .br }
            if ASCIIBytes.equalsIgnoringCase(bytes, start, end, "gzip") { return .gzip }
            if start == end || ASCIIBytes.equalsIgnoringCase(bytes, start, end, "identity") { return .identity }
            if ASCIIBytes.equalsIgnoringCase(bytes, start, end, "x-gzip") { return .gzip }
            return nil
        }()
        guard let coding else { return nil }
        self = coding
    }
}
