/// What went wrong with a Redis command. A reply of the server's own (`-ERR …`) is
/// `.server`; everything else is about reaching it. None of them carries a password.
public enum RedisError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server answered with an error reply (`WRONGTYPE …`, `NOSCRIPT …`, `WRONGPASS …`).
    case server(RedisServerError)
    /// No reply within the command timeout (or, for `.connect`, no session within the connect timeout).
    case timedOut(TimeoutPhase)
    /// Connecting failed (refused, unreachable, name not resolved), or the connection is
    /// waiting to retry after such a failure: the text says which call failed and why.
    case unavailable(String)
    /// The server's TLS certificate did not verify (`rediss://`): the reason is OpenSSL's
    /// (`certificate has expired`, `hostname mismatch`, `unable to get local issuer
    /// certificate`). Nothing is sent to such a server; the connection retries as after any failure.
    case certificateRejected(String)
    /// The connection closed before the reply came (Redis restarted, a proxy cut it).
    case connectionClosed
    /// The server sent bytes that are not RESP2 or break a limit; the connection was closed.
    case protocolViolation(RESPParseError)
    /// A command argument that Redis cannot take (an array, a null, an error value).
    case invalidArgument
    /// A typed helper got a reply of another shape than the command documents.
    case unexpectedReply(String)
    /// The client was shut down.
    case shutDown
    /// Too many commands already wait on this connection.
    case overloaded

    /// Which wait ran out.
    public enum TimeoutPhase: String, Sendable, Equatable {
        /// TCP connect, `AUTH` and `SELECT`.
        case connect
        /// A command's reply.
        case command
    }

    public var description: String {
        switch self {
        case .server(let error): "redis error: \(error)"
        case .timedOut(let phase): "redis \(phase.rawValue) timed out"
        case .unavailable(let reason): "redis unavailable: \(reason)"
        case .certificateRejected(let reason): "redis TLS certificate rejected: \(reason)"
        case .connectionClosed: "redis connection closed before the reply"
        case .protocolViolation(let error): "redis protocol violation: \(error)"
        case .invalidArgument: "redis command argument must be a string or an integer"
        case .unexpectedReply(let reply): "unexpected redis reply \(reply)"
        case .shutDown: "redis client shut down"
        case .overloaded: "too many redis commands waiting"
        }
    }
}

/// An error reply: its code (the first word, `ERR`, `NOSCRIPT`, `WRONGPASS`) and the whole message.
public struct RedisServerError: Sendable, Equatable, CustomStringConvertible {
    /// The first word of the message, upper case by Redis's convention.
    public let code: String
    /// The message as sent, code included.
    public let message: String

    /// Splits `message` into its code and text.
    public init(_ message: String) {
        self.message = message
        self.code = String(message.prefix { $0 != " " })
    }

    public var description: String { message }
}
