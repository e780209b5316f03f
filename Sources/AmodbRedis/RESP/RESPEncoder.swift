/// Writes RESP2: commands as arrays of bulk strings (binary-safe, never inline commands),
/// and any value as itself (for tests and the fuzzer's round trip).
public enum RESPEncoder {
    /// Appends `command` as an array of bulk strings. Integers and simple strings become the
    /// bulk string of their text; the caller has checked `isCommandArgument` for each.
    public static func appendCommand(_ command: [RedisValue], to buffer: inout [UInt8]) {
        appendHeader(UInt8(ascii: "*"), command.count, to: &buffer)
        for argument in command {
            switch argument {
            case .bulkString(let bytes): appendBulk(bytes, to: &buffer)
            case .simpleString(let text): appendBulk(Array(text.utf8), to: &buffer)
            case .integer(let value): appendBulk(Array(String(value).utf8), to: &buffer)
            case .error, .array, .null: appendValue(argument, to: &buffer)
            }
        }
    }

    /// The bytes of `command` (see `appendCommand`).
    public static func command(_ command: [RedisValue]) -> [UInt8] {
        var buffer: [UInt8] = []
        appendCommand(command, to: &buffer)
        return buffer
    }

    /// Whether Redis accepts `value` as a command argument: a string or an integer
    /// (an array, a null or an error would make it close the connection with a protocol error).
    public static func isCommandArgument(_ value: RedisValue) -> Bool {
        switch value {
        case .bulkString, .simpleString, .integer: true
        case .error, .array, .null: false
        }
    }

    /// Appends `value` in its own RESP2 form (`.null` as the null bulk string).
    public static func appendValue(_ value: RedisValue, to buffer: inout [UInt8]) {
        switch value {
        case .simpleString(let text):
            buffer.append(UInt8(ascii: "+"))
            buffer.append(contentsOf: text.utf8)
            buffer.append(contentsOf: crlf)
        case .error(let message):
            buffer.append(UInt8(ascii: "-"))
            buffer.append(contentsOf: message.utf8)
            buffer.append(contentsOf: crlf)
        case .integer(let number):
            buffer.append(UInt8(ascii: ":"))
            buffer.append(contentsOf: String(number).utf8)
            buffer.append(contentsOf: crlf)
        case .bulkString(let bytes):
            appendBulk(bytes, to: &buffer)
        case .array(let elements):
            appendHeader(UInt8(ascii: "*"), elements.count, to: &buffer)
            for element in elements { appendValue(element, to: &buffer) }
        case .null:
            buffer.append(contentsOf: Array("$-1\r\n".utf8))
        }
    }

    private static let crlf: [UInt8] = [0x0D, 0x0A]

    private static func appendHeader(_ type: UInt8, _ count: Int, to buffer: inout [UInt8]) {
        buffer.append(type)
        buffer.append(contentsOf: String(count).utf8)
        buffer.append(contentsOf: crlf)
    }

    private static func appendBulk(_ bytes: [UInt8], to buffer: inout [UInt8]) {
        appendHeader(UInt8(ascii: "$"), bytes.count, to: &buffer)
        buffer.append(contentsOf: bytes)
        buffer.append(contentsOf: crlf)
    }
}
