/// A bearer token (an amodb key, a proxy client token or a user's ID token) that never prints itself.
///
/// `description`, `debugDescription` and the mirror are all redacted, so the token cannot
/// reach a log, an error message or `dump` output by accident.
struct BearerToken: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The secret itself; read only to build the `Authorization` header.
    let value: String

    /// The `Authorization` header value: `Bearer <token>`.
    var headerValue: String { "Bearer \(value)" }

    var description: String { "<redacted>" }
    var debugDescription: String { "<redacted>" }
    var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }

    /// Replaces every occurrence of the token in `text`, for text that came from a server
    /// (an error body could echo the key back).
    func redacting(_ text: String) -> String {
        guard !value.isEmpty else { return text }
        return text.replacingOccurrences(of: value, with: "<redacted>")
    }
}
