import AmodbRedis
import Testing

struct RESPEncoderTests {
    @Test
    func writesACommandAsAnArrayOfBulkStrings() {
        let bytes = RESPEncoder.command(["SET", "key", .integer(-12), .simpleString("OK")])
        #expect(String(decoding: bytes, as: UTF8.self) == "*4\r\n$3\r\nSET\r\n$3\r\nkey\r\n$3\r\n-12\r\n$2\r\nOK\r\n")
    }

    @Test
    func writesBinaryArgumentsByLengthSoCRLFAndNULPassThrough() {
        let payload: [UInt8] = [0, 13, 10, 255, 36, 42]
        let bytes = RESPEncoder.command(["SET", .bulkString(payload)])
        #expect(bytes == Array("*2\r\n$3\r\nSET\r\n$6\r\n".utf8) + payload + [13, 10])
    }

    @Test(arguments: [
        RedisValue.simpleString("PONG"), .error("ERR no"), .integer(0), .integer(.min), .bulkString([]), .null,
        .array([]), .array([.array([.bulk("x"), .null]), .integer(7), .error("E")]),
    ])
    func aValueWrittenAndParsedAgainIsTheSame(_ value: RedisValue) throws {
        var wire: [UInt8] = []
        RESPEncoder.appendValue(value, to: &wire)
        var parser = RESPParser()
        parser.append(wire)
        #expect(try parser.next() == value)
        #expect(parser.bufferedByteCount == 0)
    }

    @Test(arguments: [
        (RedisValue.bulk("a"), true), (.integer(1), true), (.simpleString("a"), true),
        (.null, false), (.array([]), false), (.error("E"), false),
    ])
    func onlyStringsAndIntegersAreCommandArguments(_ value: RedisValue, allowed: Bool) {
        #expect(RESPEncoder.isCommandArgument(value) == allowed)
    }
}
