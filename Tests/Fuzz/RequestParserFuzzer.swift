// libFuzzer target for `RequestDecoder` and `ConnectionStateMachine` (ConnectionMachineFuzzing.swift): `RequestHeadParser` (and `RequestTarget`, which
// it calls) and the bodies after each head, by length or chunked (`ChunkedBodyParser`).
// Not a SwiftPM target: `run.sh` compiles this file together with the parser's own
// sources, so `internal` declarations are visible without `@testable`.
//
// Every input is read the way `Connection` reads a socket: decode from the read index
// until the decoder needs more, each head with its body, then the next pipelined one.
// That is done once with the whole input and once fed in chunks (sizes drawn from
// the input's first bytes, with the buffer compacted now and then); both must see
// the same heads and end the same way. Each outcome is checked against the
// parser's promises, under the default limits and under small ones.

import AmodbBytes

/// The limits the input is parsed under: the defaults, and small ones so the
/// 414/431/413 edges are reached by short inputs.
private let limitSets: [HTTPLimits] = {
    var small = HTTPLimits()
    small.maxRequestLineBytes = 64
    small.maxHeaderBytes = 256
    small.maxHeaderCount = 5
    small.maxBodyBytes = 64
    return [HTTPLimits(), small]
}()

/// Statuses `HTTPParseError` documents.
private let knownStatuses: Set<Int> = [400, 413, 414, 417, 431, 501, 505]

/// What one parsed head looked like, compared field by field between feeding modes.
private struct HeadSummary: Equatable, CustomStringConvertible {
    let method: String
    let target: String
    let path: String
    let query: [String]
    let version: HTTPVersion
    let headers: HTTPHeaders
    let body: BodyFraming
    let keepAlive: Bool
    let expectsContinue: Bool
    let consumed: Int

    init(_ head: ParsedHead, consumed: Int) {
        method = head.request.method
        target = head.request.target
        path = head.request.path
        query = head.request.query.items.map { "\($0.name)=\($0.value)" }
        version = head.request.version
        headers = head.request.headers
        body = head.body
        keepAlive = head.keepAlive
        expectsContinue = head.expectsContinue
        self.consumed = consumed
    }

    var description: String {
        "\(method) \(target) -> path \(path.debugDescription) query \(query) \(version.text) "
            + "headers \(headers.fields.map { "\($0.name): \($0.value)" }) body \(body) "
            + "keepAlive \(keepAlive) continue \(expectsContinue) consumed \(consumed)"
    }
}

/// How a stream of requests on one connection ended.
private enum Ending: Equatable {
    /// Every byte was used: heads and their bodies.
    case allConsumed
    /// The parser wants more bytes; this many are buffered from the head's start.
    case needMore(buffered: Int)
    /// A body was announced and not all of it arrived (or a chunked body has not ended).
    case inBody
    /// The parser refused a head.
    case error(status: Int)
}

/// Everything one connection saw.
private struct Transcript: Equatable {
    var heads: [HeadSummary] = []
    var ending = Ending.allConsumed
}

/// Checks what a parsed head promises, whatever the input was.
private func checkHead(_ head: ParsedHead, consumed: Int, available: Int, limits: HTTPLimits, input: [UInt8]) {
    let request = head.request
    check(consumed > 0, "consumed \(consumed) is not positive", input)
    check(consumed <= available, "consumed \(consumed) > \(available) bytes available", input)
    check(
        consumed <= limits.readBufferBytes,
        "a head of \(consumed) bytes is larger than the read buffer (\(limits.readBufferBytes))", input)

    check(
        !request.method.isEmpty && request.method.utf8.allSatisfy(ASCIIBytes.isToken),
        "method \(request.method.debugDescription) is not a token", input)
    check(
        request.target.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F },
        "target \(request.target.debugDescription) has a byte outside VCHAR", input)

    // The path: what routing and the upstream URL are built from, checked byte by byte
    // (a combining mark after "/" makes one Character of both, so Character checks are not enough).
    let path = Array(request.path.utf8)
    check(path.first == UInt8(ascii: "/"), "path \(request.path.debugDescription) does not start with /", input)
    check(!path.contains(0), "path \(request.path.debugDescription) contains NUL", input)
    check(
        !path.contains { $0 < 0x20 || $0 == 0x7F }, "path \(request.path.debugDescription) contains a control byte",
        input)
    check(!path.contains(UInt8(ascii: "\\")), "path \(request.path.debugDescription) contains a backslash", input)
    if path.count > 1 {
        for segment in path.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            check(!segment.isEmpty, "path \(request.path.debugDescription) has an empty segment (//)", input)
            check(
                !segment.elementsEqual([0x2E]) && !segment.elementsEqual([0x2E, 0x2E]),
                "path \(request.path.debugDescription) has a . or .. segment", input)
        }
    }
    for pair in request.query.items {
        check(
            !(Array(pair.name.utf8) + Array(pair.value.utf8)).contains { $0 < 0x20 || $0 == 0x7F },
            "query pair \(pair.name.debugDescription)=\(pair.value.debugDescription) contains a control byte", input)
    }

    for field in request.headers {
        check(
            !field.name.isEmpty && field.name.utf8.allSatisfy(ASCIIBytes.isToken),
            "header name \(field.name.debugDescription) is not a token", input)
        check(
            !field.value.utf8.contains { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F },
            "header value \(field.value.debugDescription) contains a control byte", input)
        check(
            field.value.utf8.first != 0x20 && field.value.utf8.first != 0x09
                && field.value.utf8.last != 0x20 && field.value.utf8.last != 0x09,
            "header value \(field.value.debugDescription) keeps surrounding white space", input)
    }
    check(
        request.headers.fields.count <= limits.maxHeaderCount,
        "\(request.headers.fields.count) header fields over the limit", input)

    // Framing (RFC 9112 §6): Transfer-Encoding only as exactly `chunked`, never beside
    // Content-Length; Content-Length agrees with the body length.
    let transferEncodings = request.headers.values("Transfer-Encoding")
    let lengths = request.headers.values("Content-Length")
    switch head.body {
    case .chunked:
        check(request.version == .http1_1, "a chunked HTTP/1.0 request was accepted", input)
        check(lengths.isEmpty, "chunked was accepted beside Content-Length", input)
        check(
            transferEncodings.count == 1 && transferEncodings[0].caseInsensitiveEquals("chunked"),
            "Transfer-Encoding \(transferEncodings) was accepted as chunked", input)
    case .length(let length):
        check(
            transferEncodings.isEmpty, "Transfer-Encoding \(transferEncodings) was accepted without chunked framing",
            input)
        check(
            length >= 0 && length <= limits.maxBodyBytes, "body length \(length) outside 0...\(limits.maxBodyBytes)",
            input)
        if lengths.isEmpty {
            check(length == 0, "body length \(length) without Content-Length", input)
        }
        for field in lengths {
            for item in field.split(separator: ",", omittingEmptySubsequences: false) {
                check(
                    Int(item.trimmingSpaces()) == length,
                    "Content-Length \(field.debugDescription) disagrees with body length \(length)", input)
            }
        }
    }
    if request.version == .http1_1 {
        check(
            request.headers.values("Host").count == 1, "an HTTP/1.1 request without exactly one Host was accepted",
            input)
    }
    if head.expectsContinue {
        check(head.body != .length(0), "expectsContinue without a body", input)
    }
    if let expect = request.headers["Expect"] {
        check(expect.caseInsensitiveEquals("100-continue"), "Expect \(expect.debugDescription) was accepted", input)
    }
}

/// Calls the decoder and checks the outcome.
private func decodeChecked(
    _ decoder: inout RequestDecoder, _ buffer: [UInt8], from start: Int, limits: HTTPLimits, input: [UInt8]
) -> Result<(event: RequestDecoder.Event, consumed: Int), HTTPParseError> {
    let available = buffer.count - start
    let phase = decoder.phase
    do {
        let (event, consumed) = try decoder.decode(buffer, from: start)
        check(consumed >= 0 && consumed <= available, "consumed \(consumed) of \(available) bytes available", input)
        switch event {
        case .needMore:
            if phase == .head {
                // `Connection` stops reading once `readBufferBytes` are buffered: asking for more then would stall it.
                check(
                    available < limits.readBufferBytes,
                    "needMore with \(available) bytes buffered (read buffer \(limits.readBufferBytes), line \(limits.maxRequestLineBytes), header \(limits.maxHeaderBytes))",
                    input)
                check(consumed == 0, "a head that needs more used \(consumed) bytes", input)
            } else {
                // In a body every byte given is used: nothing is held back for later.
                check(consumed == available, "a body that needs more used \(consumed) of \(available) bytes", input)
            }
        case .bodyFollows(let head):
            check(phase == .head && decoder.phase == .body, "bodyFollows outside a head", input)
            check(head.body != .length(0), "bodyFollows for a head without a body", input)
            checkHead(head, consumed: consumed, available: available, limits: limits, input: input)
        case .request(let head):
            check(decoder.phase == .head, "a complete request left the decoder in a body", input)
            if phase == .head {
                check(head.body == .length(0), "a head with a body completed without its body", input)
                checkHead(head, consumed: consumed, available: available, limits: limits, input: input)
            }
        }
        return .success((event, consumed))
    } catch {
        check(knownStatuses.contains(error.status), "unexpected status \(error.status)", input)
        return .failure(error)
    }
}

/// One connection reading `input`, delivered in pieces of the given sizes (`nil`: all at once).
/// Mirrors `Connection.processInbound`: decode until more is needed, compact the buffer
/// after `compactAfter` used bytes, stop at the first error.
private func run(_ input: [UInt8], chunks: [Int]?, compactAfter: Int, limits: HTTPLimits) -> Transcript {
    var decoder = RequestDecoder(limits: limits)
    var transcript = Transcript()
    var buffer: [UInt8] = []
    var readIndex = 0
    var delivered = 0
    var pieces = (chunks ?? [input.count])[...]
    var pendingHead: HeadSummary?

    while delivered < input.count {
        let size = max(1, min(pieces.popFirst() ?? input.count, input.count - delivered))
        buffer.append(contentsOf: input[delivered..<(delivered + size)])
        delivered += size

        while readIndex < buffer.count {
            switch decodeChecked(&decoder, buffer, from: readIndex, limits: limits, input: input) {
            case .failure(let error):
                transcript.ending = .error(status: error.status)
                return transcript
            case .success(let (event, consumed)):
                readIndex += consumed
                switch event {
                case .needMore:
                    if consumed == 0 { break }
                    continue
                case .bodyFollows(let head):
                    pendingHead = HeadSummary(head, consumed: consumed)
                    continue
                case .request(let head):
                    transcript.heads.append(pendingHead ?? HeadSummary(head, consumed: consumed))
                    pendingHead = nil
                    continue
                }
            }
            break
        }
        if readIndex > compactAfter {
            buffer.removeFirst(readIndex)
            readIndex = 0
        }
    }

    if decoder.phase == .body {
        transcript.ending = .inBody
    } else if buffer.count > readIndex {
        transcript.ending = .needMore(buffered: buffer.count - readIndex)
    } else {
        // Nothing left: a fresh decode of nothing must simply wait.
        if case .success(let (event, _)) = decodeChecked(
            &decoder, buffer, from: readIndex, limits: limits, input: input),
            case .needMore = event
        {
            transcript.ending = .allConsumed
        } else {
            fail("an empty buffer decoded as something", input)
        }
    }
    return transcript
}

/// Chunk sizes (in the mode the input's first byte picks) and a compaction threshold drawn
/// from the first bytes of the input.
private func feedingPlan(for input: [UInt8]) -> (chunks: [Int], compactAfter: Int) {
    var random = seededGenerator(for: input)
    let chunks = chunkSizes(count: input.count, mode: input.first ?? 0, using: &random)
    let compactAfter = [0, 1, 17, 4096][Int(random.next() % 4)]
    return (chunks, compactAfter)
}

/// libFuzzer's entry point: one input, checked under every limit set; traps on any broken promise.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let plan = feedingPlan(for: input)
    for limits in limitSets {
        let whole = run(input, chunks: nil, compactAfter: Int.max, limits: limits)
        let chunked = run(input, chunks: plan.chunks, compactAfter: plan.compactAfter, limits: limits)
        if whole != chunked {
            fail(
                """
                whole and chunked input disagree (limits line \(limits.maxRequestLineBytes), header \(limits.maxHeaderBytes))
                whole:   \(whole.heads) -> \(whole.ending)
                chunked: \(chunked.heads) -> \(chunked.ending)
                chunks: \(plan.chunks.prefix(40)) compactAfter \(plan.compactAfter)
                """, input)
        }
        var error: Int?
        if case .error(let status) = whole.ending { error = status }
        fuzzConnection(
            input, chunks: plan.chunks, limits: limits,
            expectedTargets: whole.heads.map { ($0.target, $0.keepAlive) }, expectedError: error,
            seed: UInt64(input.count) &* 0x9E37_79B9 &+ UInt64(input.first ?? 0))
    }
    return 0
}
