/// One RESP2 value: what Redis answers, and (as bulk strings) what a command is made of.
///
/// RESP2 has a null bulk string (`$-1`) and a null array (`*-1`); both mean "no value"
/// and are one case here, `.null`, so callers never have to tell them apart.
public enum RedisValue: Sendable, Hashable {
    /// `+OK`: a short status text (never contains CR or LF).
    case simpleString(String)
    /// `-ERR …`: an error reply, kept as a value where it sits inside an array
    /// (a top-level error reply is thrown as `RedisError.server`).
    case error(String)
    /// `:42`: a signed 64-bit integer.
    case integer(Int64)
    /// `$3\r\nfoo`: binary-safe bytes.
    case bulkString([UInt8])
    /// `*2\r\n…`: an ordered list of values, possibly nested.
    case array([RedisValue])
    /// `$-1` or `*-1`: no value (a missing key, a timed-out blocking pop).
    case null
}

extension RedisValue: ExpressibleByStringLiteral {
    /// A command word or argument written as a literal: a bulk string of its UTF-8 bytes.
    public init(stringLiteral value: String) {
        self = .bulkString(Array(value.utf8))
    }
}

extension RedisValue: ExpressibleByIntegerLiteral {
    /// An integer argument written as a literal; commands send it as a decimal bulk string.
    public init(integerLiteral value: Int64) {
        self = .integer(value)
    }
}

extension RedisValue {
    /// A bulk string holding `text` as UTF-8.
    public static func bulk(_ text: String) -> RedisValue { .bulkString(Array(text.utf8)) }

    /// The bytes of a string-like value (bulk or simple string); `nil` for anything else.
    public var bytes: [UInt8]? {
        switch self {
        case .bulkString(let bytes): bytes
        case .simpleString(let text): Array(text.utf8)
        default: nil
        }
    }

    /// The text of a string-like value decoded as UTF-8 (invalid bytes repaired); `nil` otherwise.
    public var string: String? {
        bytes.map { String(decoding: $0, as: UTF8.self) }
    }

    /// The integer of an integer reply; `nil` for anything else.
    public var integer: Int64? {
        if case .integer(let value) = self { value } else { nil }
    }

    /// The elements of an array reply; `nil` for anything else.
    public var array: [RedisValue]? {
        if case .array(let elements) = self { elements } else { nil }
    }

    /// Whether this is the null bulk string or null array.
    public var isNull: Bool {
        if case .null = self { true } else { false }
    }
}

extension RedisValue: CustomStringConvertible {
    /// A short, log-safe rendering: bulk strings show their length, never their bytes
    /// (they may hold a cached body, a password in an `AUTH`, anything a caller stored).
    public var description: String {
        switch self {
        case .simpleString(let text): "+\(text)"
        case .error(let message): "-\(message)"
        case .integer(let value): ":\(value)"
        case .bulkString(let bytes): "$<\(bytes.count) bytes>"
        case .array(let elements): "[\(elements.map(\.description).joined(separator: ", "))]"
        case .null: "(null)"
        }
    }
}
