/// A Redis password. Its `description`, debug description and mirror are redacted (as the
/// proxy's `Secret` is), so a configuration dump, a log line or an error message built by
/// interpolation cannot leak it; only `AUTH` reads `revealed`.
public struct RedisPassword: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    private let value: String

    /// Wraps a password.
    public init(_ value: String) {
        self.value = value
    }

    /// The password itself, for `AUTH` and for tests that check it appears nowhere else.
    public var revealed: String { value }

    public var description: String { "<redacted>" }
    public var debugDescription: String { "RedisPassword(<redacted>)" }
    /// No children: `dump` and reflection show nothing either.
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
