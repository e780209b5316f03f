import AmodbRedis
import Testing

/// A reply on the wire and what it should parse to.
struct ReplyFixture: Sendable, CustomTestStringConvertible {
    let name: String
    let bytes: [UInt8]
    let expected: Result<[RedisValue], RESPParseError>

    init(_ name: String, _ text: String, _ expected: [RedisValue]) {
        self.name = name
        self.bytes = Array(text.utf8)
        self.expected = .success(expected)
    }

    init(_ name: String, _ text: String, fails error: RESPParseError) {
        self.name = name
        self.bytes = Array(text.utf8)
        self.expected = .failure(error)
    }

    var testDescription: String { name }
}

/// Feeds `bytes` whole (`chunk == nil`) or in chunks of that size and collects every reply,
/// or the error that ended the stream.
private func parseAll(_ bytes: [UInt8], chunk: Int?, limits: RESPLimits = RESPLimits()) -> Result<
    [RedisValue], RESPParseError
> {
    var parser = RESPParser(limits: limits)
    var values: [RedisValue] = []
    var offset = 0
    let step = max(1, chunk ?? bytes.count)
    repeat {
        parser.append(bytes[offset..<min(bytes.count, offset + step)])
        offset += step
        do {
            while let value = try parser.next() { values.append(value) }
        } catch {
            return .failure(error)
        }
    } while offset < bytes.count
    return .success(values)
}

struct RESPParserTests {
    static let fixtures: [ReplyFixture] = [
        ReplyFixture("simple string", "+OK\r\n", [.simpleString("OK")]),
        ReplyFixture("empty simple string", "+\r\n", [.simpleString("")]),
        ReplyFixture("error", "-ERR unknown command\r\n", [.error("ERR unknown command")]),
        ReplyFixture("integer", ":1000\r\n", [.integer(1000)]),
        ReplyFixture("negative integer", ":-42\r\n", [.integer(-42)]),
        ReplyFixture("largest integer", ":9223372036854775807\r\n", [.integer(.max)]),
        ReplyFixture("bulk string", "$5\r\nhello\r\n", [.bulk("hello")]),
        ReplyFixture("empty bulk string", "$0\r\n\r\n", [.bulkString([])]),
        ReplyFixture("bulk string holding CRLF", "$4\r\n\r\n\r\n\r\n", [.bulkString([13, 10, 13, 10])]),
        ReplyFixture("null bulk string", "$-1\r\n", [.null]),
        ReplyFixture("null array", "*-1\r\n", [.null]),
        ReplyFixture("empty array", "*0\r\n", [.array([])]),
        ReplyFixture(
            "array of mixed values", "*3\r\n:1\r\n$3\r\nfoo\r\n+bar\r\n",
            [.array([.integer(1), .bulk("foo"), .simpleString("bar")])]),
        ReplyFixture(
            "nested arrays", "*2\r\n*2\r\n:1\r\n:2\r\n*1\r\n*0\r\n",
            [.array([.array([.integer(1), .integer(2)]), .array([.array([])])])]),
        ReplyFixture("null inside an array", "*3\r\n$1\r\na\r\n$-1\r\n*-1\r\n", [.array([.bulk("a"), .null, .null])]),
        ReplyFixture("error inside an array", "*2\r\n-ERR x\r\n:1\r\n", [.array([.error("ERR x"), .integer(1)])]),
        ReplyFixture(
            "pipelined replies", "+OK\r\n:1\r\n$-1\r\n*1\r\n+x\r\n",
            [.simpleString("OK"), .integer(1), .null, .array([.simpleString("x")])]),
        ReplyFixture("incomplete bulk string waits", "$5\r\nhel", []),
        ReplyFixture("incomplete array waits", "*2\r\n:1\r\n", []),
        ReplyFixture("line without its LF waits", "+OK\r", []),
        ReplyFixture("unknown type byte", "!oops\r\n", fails: .unknownType(UInt8(ascii: "!"))),
        ReplyFixture("RESP3 map is refused", "%1\r\n", fails: .unknownType(UInt8(ascii: "%"))),
        ReplyFixture("bare LF", "+OK\n", fails: .malformedLine),
        ReplyFixture("CR without LF", "+O\rK\r\n", fails: .malformedLine),
        ReplyFixture("integer with letters", ":12a\r\n", fails: .invalidNumber),
        ReplyFixture("empty integer", ":\r\n", fails: .invalidNumber),
        ReplyFixture("integer overflow", ":9223372036854775808\r\n", fails: .invalidNumber),
        ReplyFixture("negative bulk length", "$-2\r\n", fails: .invalidNumber),
        ReplyFixture("negative array length", "*-5\r\n", fails: .invalidNumber),
        ReplyFixture("bulk length with plus sign", "$+1\r\na\r\n", fails: .invalidNumber),
        ReplyFixture("bulk string without CRLF after it", "$2\r\nabcd\r\n", fails: .missingBulkTerminator),
        ReplyFixture("bulk string with LF only after it", "$2\r\nab\n\n", fails: .missingBulkTerminator),
        ReplyFixture("error after a good reply", "+OK\r\n?\r\n", fails: .unknownType(UInt8(ascii: "?"))),
    ]

    @Test(arguments: fixtures, [nil, 1, 2, 7])
    func parsesTheSameWholeAndInPieces(_ fixture: ReplyFixture, chunk: Int?) {
        #expect(parseAll(fixture.bytes, chunk: chunk) == fixture.expected)
    }

    @Test(arguments: [nil, 1, 3] as [Int?])
    func refusesABulkStringOverTheLimitBeforeItArrives(chunk: Int?) {
        var limits = RESPLimits()
        limits.maxBulkBytes = 10
        #expect(parseAll(Array("$11\r\n".utf8), chunk: chunk, limits: limits) == .failure(.bulkTooLong(11)))
        #expect(
            parseAll(Array("$10\r\n0123456789\r\n".utf8), chunk: chunk, limits: limits)
                == .success([.bulk("0123456789")]))
    }

    @Test(arguments: [nil, 1] as [Int?])
    func refusesAnArrayOverTheLimit(chunk: Int?) {
        var limits = RESPLimits()
        limits.maxArrayCount = 3
        #expect(parseAll(Array("*4\r\n".utf8), chunk: chunk, limits: limits) == .failure(.arrayTooLong(4)))
        #expect(
            parseAll(Array("*3\r\n:1\r\n:2\r\n:3\r\n".utf8), chunk: chunk, limits: limits)
                == .success([.array([1, 2, 3])]))
    }

    @Test(arguments: [nil, 1] as [Int?])
    func refusesNestingDeeperThanTheLimit(chunk: Int?) {
        var limits = RESPLimits()
        limits.maxDepth = 3
        let three = String(repeating: "*1\r\n", count: 3) + ":1\r\n"
        let four = String(repeating: "*1\r\n", count: 4) + ":1\r\n"
        #expect(
            parseAll(Array(three.utf8), chunk: chunk, limits: limits) == .success([.array([.array([.array([1])])])]))
        #expect(parseAll(Array(four.utf8), chunk: chunk, limits: limits) == .failure(.tooDeep))
        // Found by the fuzzer: an empty array one level too deep is too deep as well.
        #expect(
            parseAll(Array("*1\r\n*1\r\n*0\r\n".utf8), chunk: chunk, limits: limits)
                == .success([.array([.array([.array([])])])]))
        #expect(parseAll(Array("*1\r\n*1\r\n*1\r\n*0\r\n".utf8), chunk: chunk, limits: limits) == .failure(.tooDeep))
    }

    @Test(arguments: [nil, 1] as [Int?])
    func refusesALineOverTheLimitWithoutWaitingForItsEnd(chunk: Int?) {
        var limits = RESPLimits()
        limits.maxLineBytes = 8
        #expect(
            parseAll(Array("+12345678\r\n".utf8), chunk: chunk, limits: limits) == .success([.simpleString("12345678")])
        )
        #expect(parseAll(Array("+123456789".utf8), chunk: chunk, limits: limits) == .failure(.lineTooLong))
    }

    @Test(arguments: [nil, 1] as [Int?])
    func refusesAReplyWithMoreValuesThanTheLimitAsSoonAsAnArrayAnnouncesThem(chunk: Int?) {
        var limits = RESPLimits()
        limits.maxReplyElements = 6
        // Two arrays of two: 1 + 2 × 3 = 7 values, the second header already over.
        #expect(
            parseAll(Array("*2\r\n*2\r\n:1\r\n:2\r\n*2\r\n".utf8), chunk: chunk, limits: limits)
                == .failure(.tooManyElements))
        #expect(
            parseAll(Array("*2\r\n*2\r\n:1\r\n:2\r\n:3\r\n".utf8), chunk: chunk, limits: limits)
                == .success([.array([.array([1, 2]), 3])]))
        // The count starts again with each reply.
        #expect(
            parseAll(
                Array("*5\r\n:1\r\n:2\r\n:3\r\n:4\r\n:5\r\n*5\r\n:1\r\n:2\r\n:3\r\n:4\r\n:5\r\n".utf8), chunk: chunk,
                limits: limits)
                == .success([.array([1, 2, 3, 4, 5]), .array([1, 2, 3, 4, 5])]))
    }

    @Test
    func refusesAReplyLargerThanTheLimitEvenInSmallPieces() {
        var limits = RESPLimits()
        limits.maxReplyBytes = 40
        let reply = "*4\r\n$5\r\nabcde\r\n$5\r\nabcde\r\n$5\r\nabcde\r\n$5\r\nabcde\r\n"
        #expect(parseAll(Array(reply.utf8), chunk: nil, limits: limits) == .failure(.replyTooLarge))
        #expect(parseAll(Array(reply.utf8), chunk: 1, limits: limits) == .failure(.replyTooLarge))
        #expect(
            parseAll(Array("*1\r\n$5\r\nabcde\r\n".utf8), chunk: 1, limits: limits)
                == .success([.array([.bulk("abcde")])]))
    }

    @Test
    func keepsThrowingAfterAnError() throws {
        var parser = RESPParser()
        parser.append(Array("!\r\n+OK\r\n".utf8))
        #expect(throws: RESPParseError.unknownType(UInt8(ascii: "!"))) { try parser.next() }
        #expect(throws: RESPParseError.unknownType(UInt8(ascii: "!"))) { try parser.next() }
    }

    @Test
    func parsesAThousandPipelinedRepliesOneByteAtATimeInLinearTime() throws {
        var wire: [UInt8] = []
        for index in 0..<1000 { RESPEncoder.appendValue(.bulk("value-\(index)"), to: &wire) }
        var parser = RESPParser()
        var count = 0
        for byte in wire {
            parser.append(CollectionOfOne(byte))
            while let value = try parser.next() {
                #expect(value == .bulk("value-\(count)"))
                count += 1
            }
        }
        #expect(count == 1000)
        #expect(parser.bufferedByteCount == 0)
    }

    @Test
    func readsABinaryBulkStringOfEveryByteValue() throws {
        let bytes = (0...255).map(UInt8.init) + (0...255).map(UInt8.init).reversed()
        var wire: [UInt8] = []
        RESPEncoder.appendValue(.bulkString(bytes), to: &wire)
        #expect(parseAll(wire, chunk: 1) == .success([.bulkString(bytes)]))
    }
}
