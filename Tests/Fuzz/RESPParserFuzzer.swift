// libFuzzer target for `RESPParser` (and `RESPEncoder`, which it checks against).
// Not a SwiftPM target: `run.sh` (with FUZZ_TARGET=resp) compiles this file together
// with the parser's own sources, so `internal` declarations are visible.
//
// Every input is a stream of replies from a server. It is parsed once whole and once
// fed in chunks (sizes drawn from the input's first bytes); both must give the same
// replies and end the same way, under the default limits and under small ones. Each
// reply must respect the limits and survive being written again and parsed back.

/// The default limits, and small ones so every limit is reached by short inputs.
private let limitSets: [RESPLimits] = {
    var small = RESPLimits()
    small.maxBulkBytes = 16
    small.maxArrayCount = 4
    small.maxDepth = 3
    small.maxLineBytes = 12
    small.maxReplyBytes = 96
    return [RESPLimits(), small]
}()

/// How a stream ended.
private enum Ending: Equatable {
    /// Every byte was part of a whole reply.
    case allConsumed
    /// A reply had started and not finished.
    case partial
    /// The parser refused the stream.
    case error(RESPParseError)
}

/// Everything one connection saw.
private struct Transcript: Equatable {
    var replies: [RedisValue] = []
    var ending = Ending.allConsumed
}

/// Checks that `value` (at nesting `depth`) keeps within `limits`.
private func checkLimits(_ value: RedisValue, depth: Int, limits: RESPLimits, input: [UInt8]) {
    switch value {
    case .simpleString(let text), .error(let text):
        check(text.utf8.count <= limits.maxLineBytes * 3, "a line of \(text.utf8.count) bytes passed the limit", input)
        check(!text.utf8.contains(0x0D) && !text.utf8.contains(0x0A), "a line holds CR or LF", input)
    case .bulkString(let bytes):
        check(bytes.count <= limits.maxBulkBytes, "a bulk string of \(bytes.count) bytes passed the limit", input)
    case .array(let elements):
        check(depth < limits.maxDepth, "arrays nested \(depth + 1) deep passed the limit", input)
        check(elements.count <= limits.maxArrayCount, "an array of \(elements.count) passed the limit", input)
        for element in elements { checkLimits(element, depth: depth + 1, limits: limits, input: input) }
    case .integer, .null:
        break
    }
}

/// Writes `value` again and parses it back: it must come back the same and use every byte.
private func checkRoundTrip(_ value: RedisValue, input: [UInt8]) {
    var wire: [UInt8] = []
    RESPEncoder.appendValue(value, to: &wire)
    var parser = RESPParser()
    parser.append(wire)
    do {
        let again = try parser.next()
        check(again == value, "round trip changed \(value) into \(String(describing: again))", input)
        check(parser.bufferedByteCount == 0, "round trip left \(parser.bufferedByteCount) bytes", input)
    } catch {
        fail("round trip of \(value) threw \(error)", input)
    }
}

/// Feeds `input` in pieces of the given sizes (`nil`: all at once) and records what came out.
private func run(_ input: [UInt8], chunks: [Int]?, limits: RESPLimits) -> Transcript {
    var parser = RESPParser(limits: limits)
    var transcript = Transcript()
    var delivered = 0
    var pieces = (chunks ?? [input.count])[...]
    while delivered < input.count {
        let size = max(1, min(pieces.popFirst() ?? input.count, input.count - delivered))
        parser.append(input[delivered..<(delivered + size)])
        delivered += size
        do {
            while let value = try parser.next() { transcript.replies.append(value) }
        } catch {
            transcript.ending = .error(error)
            do {
                _ = try parser.next()
                fail("a parser that threw \(error) parsed again", input)
            } catch {
                check(error == transcript.ending.error, "a parser that threw gave another error \(error)", input)
            }
            return transcript
        }
    }
    transcript.ending = parser.isMidReply ? .partial : .allConsumed
    return transcript
}

extension Ending {
    fileprivate var error: RESPParseError? {
        if case .error(let error) = self { error } else { nil }
    }
}

/// Chunk sizes drawn from the first bytes of the input, in the mode its last byte picks.
private func chunkPlan(for input: [UInt8]) -> [Int] {
    var random = seededGenerator(for: input)
    return chunkSizes(count: input.count, mode: input.last ?? 0, using: &random)
}

/// libFuzzer's entry point: one input, checked under every limit set; traps on any broken promise.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let chunks = chunkPlan(for: input)
    for limits in limitSets {
        let whole = run(input, chunks: nil, limits: limits)
        let chunked = run(input, chunks: chunks, limits: limits)
        if whole != chunked {
            fail(
                """
                whole and chunked input disagree (max bulk \(limits.maxBulkBytes), line \(limits.maxLineBytes))
                whole:   \(whole.replies) -> \(whole.ending)
                chunked: \(chunked.replies) -> \(chunked.ending)
                chunks: \(chunks.prefix(40))
                """, input)
        }
        for reply in whole.replies {
            checkLimits(reply, depth: 0, limits: limits, input: input)
            checkRoundTrip(reply, input: input)
        }
    }
    return 0
}
