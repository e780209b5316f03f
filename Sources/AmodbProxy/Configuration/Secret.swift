/// A secret: the amodb API key or a client token. Its `description`, debug description
/// and mirror are redacted, so interpolating or dumping it cannot leak it into a log
/// line or an error message; only the code that must use it reads `revealed`.
package struct Secret: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    private let value: String

    /// Wraps a secret; surrounding white space (a trailing newline in a secrets file) is dropped.
    package init(_ value: String) {
        self.value = String(value.trimmingSpacesAndNewlines())
    }

    /// True when there is no secret at all.
    package var isEmpty: Bool { value.isEmpty }

    /// The `Authorization` field value for amodb.
    var bearerFieldValue: String { "Bearer \(value)" }

    /// The raw secret: to send it to amodb, to compare a client's token, and to check
    /// that responses and logs do not contain it.
    var revealed: String { value }

    package var description: String { "<redacted>" }
    package var debugDescription: String { "Secret(<redacted>)" }
    /// No children: `dump` and reflection show nothing either.
    package var customMirror: Mirror { Mirror(self, children: [:]) }
}

extension StringProtocol {
    package func trimmingSpacesAndNewlines() -> Substring {
        let s = Substring(self)
        var start = s.startIndex
        var end = s.endIndex
        while start < end, s[start].isWhitespace { start = s.index(after: start) }
        while end > start, s[s.index(before: end)].isWhitespace { end = s.index(before: end) }
        return s[start..<end]
    }
}

extension String {
    /// Without a leading UTF-8 byte order mark (U+FEFF), which editors on Windows write
    /// at the start of a file and which is not white space.
    func trimmingByteOrderMark() -> String {
        unicodeScalars.first == "\u{FEFF}" ? String(unicodeScalars.dropFirst()) : self
    }
}
