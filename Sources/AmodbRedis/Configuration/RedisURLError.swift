/// Why an `AMODB_REDIS_URL` was refused. Its description is one line naming the setting,
/// for the proxy to print before exiting; it never contains the password.
public struct RedisURLError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, without the setting's name (e.g. `port "x" is not a number`).
    public let reason: String

    /// A refusal for `reason` (which must not quote the password).
    init(_ reason: String) {
        self.reason = reason
    }

    public var description: String { "AMODB_REDIS_URL: \(reason)" }
}
