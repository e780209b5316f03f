/// Why a Redis URL was refused. Its description is the reason alone, on one line, for
/// the caller to word with the setting it read the URL from; it never contains the password.
public struct RedisURLError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong (e.g. `port "x" is not a number`).
    public let reason: String

    /// A refusal for `reason` (which must not quote the password).
    init(_ reason: String) {
        self.reason = reason
    }

    public var description: String { reason }
}
