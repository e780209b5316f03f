/// Why a reply could not be parsed. After one, the connection's byte stream cannot be
/// trusted and must be closed; the parser keeps throwing the same error.
public enum RESPParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The first byte of a value is not one of `+ - : $ *`.
    case unknownType(UInt8)
    /// A CR not followed by LF, or an LF without CR, in a line.
    case malformedLine
    /// An integer or length that is not a decimal number in range.
    case invalidNumber
    /// A bulk string not followed by CRLF.
    case missingBulkTerminator
    /// A line longer than `RESPLimits.maxLineBytes`.
    case lineTooLong
    /// A bulk string longer than `RESPLimits.maxBulkBytes`.
    case bulkTooLong(Int)
    /// An array longer than `RESPLimits.maxArrayCount`.
    case arrayTooLong(Int)
    /// More values in one reply than `RESPLimits.maxReplyElements`.
    case tooManyElements
    /// Arrays nested deeper than `RESPLimits.maxDepth`.
    case tooDeep
    /// A reply larger than `RESPLimits.maxReplyBytes`.
    case replyTooLarge

    public var description: String {
        switch self {
        case .unknownType(let byte): "unknown RESP type byte 0x\(String(byte, radix: 16))"
        case .malformedLine: "malformed RESP line (bare CR or LF)"
        case .invalidNumber: "invalid RESP integer or length"
        case .missingBulkTerminator: "RESP bulk string not followed by CRLF"
        case .lineTooLong: "RESP line over the limit"
        case .bulkTooLong(let length): "RESP bulk string of \(length) bytes over the limit"
        case .arrayTooLong(let count): "RESP array of \(count) elements over the limit"
        case .tooManyElements: "RESP reply with more values than the limit"
        case .tooDeep: "RESP arrays nested over the limit"
        case .replyTooLarge: "RESP reply over the size limit"
        }
    }
}
