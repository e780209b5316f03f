/// Parses RESP2 replies from a byte stream. A pure value: it never touches a socket. Bytes
/// go in with `append`, whole replies come out of `next()`. It is resumable: the arrays
/// opened so far and how far a line has been searched are remembered, so a reply arriving
/// a byte at a time costs linear time, and a reply is judged the same whether it arrives
/// whole or in pieces. Limits (`RESPLimits`) are checked as soon as a header announces a
/// size, before anything is buffered for it.
public struct RESPParser: Sendable {
    /// An array whose elements are still being read.
    private struct Frame: Sendable {
        let count: Int
        var elements: [RedisValue]
    }

    /// What one step over the buffer produced.
    private enum Step {
        case value(RedisValue)
        case openedArray
        case needMore
    }

    /// The limits every reply is held to.
    public let limits: RESPLimits
    private var buffer: [UInt8] = []
    /// First byte not yet part of a parsed value or array header.
    private var position = 0
    /// Bytes before this index (from `position`) are known to hold no CR or LF.
    private var scanned = 0
    private var stack: [Frame] = []
    /// Wire bytes of the reply being read, for `maxReplyBytes`.
    private var replyBytes = 0
    /// Values (arrays included) of the reply being read, for `maxReplyElements`.
    private var replyElements = 0
    private var failure: RESPParseError?

    /// A parser with the given limits.
    public init(limits: RESPLimits = RESPLimits()) {
        self.limits = limits
    }

    /// Bytes received and not yet returned as part of a whole reply (a partial reply's
    /// consumed prefix is not counted).
    public var bufferedByteCount: Int { buffer.count - position }

    /// Whether a reply has started and is not complete: what a closed connection would cut.
    public var isMidReply: Bool { !stack.isEmpty || position < buffer.count }

    /// Adds bytes read from the connection.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        buffer.append(contentsOf: bytes)
    }

    /// Adds bytes read from the connection.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        buffer.append(contentsOf: bytes)
    }

    /// The next whole reply, or `nil` until more bytes arrive. Throws for malformed input or
    /// a reply over a limit; after that the stream is unusable and every call throws again.
    public mutating func next() throws(RESPParseError) -> RedisValue? {
        if let failure { throw failure }
        do {
            return try parseNext()
        } catch {
            failure = error
            buffer = []
            stack = []
            position = 0
            throw error
        }
    }

    private mutating func parseNext() throws(RESPParseError) -> RedisValue? {
        while true {
            switch try step() {
            case .needMore:
                compact()
                return nil
            case .openedArray:
                continue
            case .value(var value):
                // Complete every array this value finishes; hand out the outermost.
                while !stack.isEmpty {
                    stack[stack.count - 1].elements.append(value)
                    guard stack[stack.count - 1].elements.count == stack[stack.count - 1].count else { break }
                    value = .array(stack.removeLast().elements)
                }
                if stack.isEmpty {
                    replyBytes = 0
                    replyElements = 0
                    compact()
                    return value
                }
            }
        }
    }

    /// Reads one scalar, or one array header, at `position`.
    private mutating func step() throws(RESPParseError) -> Step {
        let step = try readValue()
        if case .needMore = step { return step }
        replyElements += 1
        guard replyElements <= limits.maxReplyElements else { throw .tooManyElements }
        return step
    }

    /// One scalar, or one array header, at `position`.
    private mutating func readValue() throws(RESPParseError) -> Step {
        guard position < buffer.count else { return .needMore }
        let type = buffer[position]
        guard
            [UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: ":"), UInt8(ascii: "$"), UInt8(ascii: "*")].contains(
                type)
        else {
            throw .unknownType(type)
        }
        guard let lineEnd = try findLineEnd() else { return .needMore }
        let lineStart = position + 1
        let afterLine = lineEnd + 2
        switch type {
        case UInt8(ascii: "+"):
            try consume(to: afterLine)
            return .value(.simpleString(String(decoding: buffer[lineStart..<lineEnd], as: UTF8.self)))
        case UInt8(ascii: "-"):
            try consume(to: afterLine)
            return .value(.error(String(decoding: buffer[lineStart..<lineEnd], as: UTF8.self)))
        case UInt8(ascii: ":"):
            let number = try parseInteger(lineStart, lineEnd)
            try consume(to: afterLine)
            return .value(.integer(number))
        case UInt8(ascii: "$"):
            let length = try parseInteger(lineStart, lineEnd)
            if length == -1 {
                try consume(to: afterLine)
                return .value(.null)
            }
            guard length >= 0 else { throw .invalidNumber }
            guard length <= limits.maxBulkBytes else { throw .bulkTooLong(Int(clamping: length)) }
            let end = afterLine + Int(length)
            guard replyBytes + (end + 2 - position) <= limits.maxReplyBytes else { throw .replyTooLarge }
            guard end + 2 <= buffer.count else {
                // The terminator can be checked as soon as its first byte is here.
                if end < buffer.count, buffer[end] != 0x0D { throw .missingBulkTerminator }
                return .needMore
            }
            guard buffer[end] == 0x0D, buffer[end + 1] == 0x0A else { throw .missingBulkTerminator }
            let bytes = Array(buffer[afterLine..<end])
            try consume(to: end + 2)
            return .value(.bulkString(bytes))
        default:
            let count = try parseInteger(lineStart, lineEnd)
            if count == -1 {
                try consume(to: afterLine)
                return .value(.null)
            }
            guard count >= 0 else { throw .invalidNumber }
            guard count <= limits.maxArrayCount else { throw .arrayTooLong(Int(clamping: count)) }
            // Each element is at least one more value: an array that could never fit is refused now.
            guard replyElements + 1 + Int(count) <= limits.maxReplyElements else { throw .tooManyElements }
            // An empty array nests as deep as a full one.
            guard stack.count < limits.maxDepth else { throw .tooDeep }
            if count == 0 {
                try consume(to: afterLine)
                return .value(.array([]))
            }
            try consume(to: afterLine)
            var elements: [RedisValue] = []
            elements.reserveCapacity(min(Int(count), 64))
            stack.append(Frame(count: Int(count), elements: elements))
            return .openedArray
        }
    }

    /// The index of the CR ending the line at `position`, or `nil` if it has not arrived.
    /// Only `maxLineBytes + 2` bytes past the type byte are ever looked at, so the answer
    /// does not depend on how the bytes were split.
    private mutating func findLineEnd() throws(RESPParseError) -> Int? {
        let window = position + 1 + limits.maxLineBytes  // the last index the CR may sit at
        let end = min(buffer.count, window + 1)
        var index = max(position + 1, scanned)
        while index < end {
            let byte = buffer[index]
            if byte == 0x0D {
                guard index + 1 < buffer.count else {
                    scanned = index
                    return nil
                }
                guard buffer[index + 1] == 0x0A else { throw .malformedLine }
                return index
            }
            if byte == 0x0A { throw .malformedLine }
            index += 1
        }
        if buffer.count > window { throw .lineTooLong }
        scanned = index
        return nil
    }

    /// A decimal `Int64` in `buffer[start..<end]`: an optional `-`, then 1 to 19 digits.
    private func parseInteger(_ start: Int, _ end: Int) throws(RESPParseError) -> Int64 {
        var index = start
        let negative = index < end && buffer[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        guard index < end, end - index <= 19 else { throw .invalidNumber }
        var value: Int64 = 0
        while index < end {
            let digit = buffer[index]
            guard digit >= 0x30, digit <= 0x39 else { throw .invalidNumber }
            let (times, overflowTimes) = value.multipliedReportingOverflow(by: 10)
            // Accumulated with the sign applied, so `Int64.min` (one beyond `-Int64.max`) parses too.
            let digitValue = Int64(digit - 0x30)
            let (next, overflowNext) =
                negative
                ? times.subtractingReportingOverflow(digitValue) : times.addingReportingOverflow(digitValue)
            guard !overflowTimes, !overflowNext else { throw .invalidNumber }
            value = next
            index += 1
        }
        return value
    }

    /// Marks the bytes up to `end` as used by the reply being read.
    private mutating func consume(to end: Int) throws(RESPParseError) {
        replyBytes += end - position
        guard replyBytes <= limits.maxReplyBytes else { throw .replyTooLarge }
        position = end
        scanned = end
    }

    /// Drops used bytes once they are most of the buffer (amortised, not on every reply).
    private mutating func compact() {
        if position == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 64 * 1024)
            position = 0
            scanned = 0
        } else if position > 4096, position * 2 > buffer.count {
            buffer.removeFirst(position)
            scanned -= position
            position = 0
        }
    }
}
