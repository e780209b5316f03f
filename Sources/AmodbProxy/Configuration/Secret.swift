/// The amodb API key. Its `description` is redacted so that interpolating it into a
/// log line or an error message cannot leak it; only the upstream call reads it.
public struct APIKey: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    private let value: String

    /// Wraps a key; surrounding white space (a trailing newline in a secrets file) is dropped.
    public init(_ value: String) {
        self.value = String(value.trimmingSpacesAndNewlines())
    }

    /// True when there is no key at all.
    public var isEmpty: Bool { value.isEmpty }

    /// The `Authorization` field value for amodb. The only way to the raw key.
    var bearerFieldValue: String { "Bearer \(value)" }

    /// The raw key, so responses and logs can be checked for it before they leave.
    var revealed: String { value }

    public var description: String { "<redacted>" }
    public var debugDescription: String { "APIKey(<redacted>)" }
    /// No children: `dump` and reflection show nothing either.
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}

extension StringProtocol {
    func trimmingSpacesAndNewlines() -> Substring {
        let s = Substring(self)
        var start = s.startIndex, end = s.endIndex
        while start < end, s[start].isWhitespace { start = s.index(after: start) }
        while end > start, s[s.index(before: end)].isWhitespace { end = s.index(before: end) }
        return s[start..<end]
    }
}
