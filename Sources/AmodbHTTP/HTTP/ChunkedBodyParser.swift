import AmodbBytes

/// Reads a request body in the chunked transfer coding (RFC 9112 §7.1) and throws it
/// away, checking its framing strictly. A pure, resumable value like `RequestHeadParser`:
/// it never touches a socket, looks at each byte once wherever the input is split, and
/// never consumes a byte past the body's final CRLF, so a pipelined request that follows
/// is left for the head parser.
///
/// Strict on purpose: anything a lenient parser could read differently (a size with a
/// sign, spaces or `0x`, a bare CR or LF, a chunk not followed by CRLF, folded or malformed
/// trailers) is refused, and the connection is closed, so no byte of it can be taken for
/// the start of another request (request smuggling).
struct ChunkedBodyParser: Sendable {
    /// Longest chunk-size line, extensions included: extensions carry nothing we use, and
    /// an endless one must not hold a connection (CVE-2024-24806-style extension floods).
    static let maxChunkLineBytes = 4096

    /// Where in the coding the next byte belongs.
    private enum State: Sendable, Equatable {
        /// Hex digits of a chunk size (`digits` seen so far).
        case size(digits: Int)
        /// After `;`: a chunk extension, ignored but checked (no control bytes).
        case extensions
        /// After the CR ending a size line; an LF must follow.
        case sizeLineFeed
        /// Chunk data still to skip.
        case data(remaining: Int)
        /// After a chunk's data: CR, then LF.
        case dataCarriageReturn
        case dataLineFeed
        /// At the start of a trailer line, or of the final empty line.
        case trailerStart
        /// In a trailer field's name (`length` bytes so far).
        case trailerName(length: Int)
        /// In a trailer field's value.
        case trailerValue
        /// After the CR ending a trailer line (`final`: it was the empty line).
        case trailerLineFeed(final: Bool)
        /// The body ended; nothing more is read.
        case done
    }

    /// The body and header limits the chunks and trailers are held to.
    let limits: HTTPLimits
    private var state = State.size(digits: 0)
    /// The size of the chunk being announced.
    private var size = 0
    /// Chunk data announced so far, checked against `limits.maxBodyBytes`.
    private var total = 0
    /// Bytes of the current chunk-size line.
    private var lineBytes = 0
    /// Trailer bytes and fields so far, held to the header limits.
    private var trailerBytes = 0
    private var trailerCount = 0

    init(limits: HTTPLimits) {
        self.limits = limits
    }

    /// Whether the whole body, trailers and final CRLF included, has been read.
    var isComplete: Bool { state == .done }

    /// Reads body bytes from `buffer[start...]`; returns how many belong to the body
    /// (all of them, unless the body ended within them). Throws on a framing error or a
    /// body over `maxBodyBytes` (413); after a throw the connection must be answered and closed.
    mutating func consume(_ buffer: [UInt8], from start: Int) throws(HTTPParseError) -> Int {
        try consume(buffer.span.extracting(start...))
    }

    /// The same, from bytes in place.
    mutating func consume(_ bytes: Span<UInt8>) throws(HTTPParseError) -> Int {
        var index = 0
        while index < bytes.count {
            if case .data(let remaining) = state {
                // Chunk data is skipped in bulk, never looked at.
                let skipped = min(remaining, bytes.count - index)
                index += skipped
                state = remaining == skipped ? .dataCarriageReturn : .data(remaining: remaining - skipped)
                continue
            }
            if state == .done { break }
            try step(bytes[index])
            index += 1
        }
        return index
    }

    /// One byte outside chunk data.
    private mutating func step(_ byte: UInt8) throws(HTTPParseError) {
        switch state {
        case .size(let digits):
            try countLineByte()
            if let value = hexValue(byte) {
                // Leading zeros are allowed. Checked before it can overflow, whatever the limit.
                guard size <= (Int.max - value) / 16 else { throw .bodyTooLarge }
                size = size * 16 + value
                if size > limits.maxBodyBytes - total { throw .bodyTooLarge }
                state = .size(digits: digits + 1)
            } else if digits > 0, byte == semicolon {
                state = .extensions
            } else if digits > 0, byte == cr {
                state = .sizeLineFeed
            } else {
                throw .malformedChunk  // no digits, a sign, white space, `0x`, a bare LF
            }
        case .extensions:
            try countLineByte()
            if byte == cr {
                state = .sizeLineFeed
            } else if byte == lf || (byte < 0x20 && byte != tab) || byte == 0x7F {
                throw .malformedChunk  // bare LF or a control byte in an extension
            }
        case .sizeLineFeed:
            guard byte == lf else { throw .malformedChunk }
            lineBytes = 0
            total += size
            if size == 0 {
                state = .trailerStart  // the last chunk
            } else {
                state = .data(remaining: size)
            }
            size = 0
        case .dataCarriageReturn:
            guard byte == cr else { throw .malformedChunk }
            state = .dataLineFeed
        case .dataLineFeed:
            guard byte == lf else { throw .malformedChunk }
            state = .size(digits: 0)
        case .trailerStart:
            try countTrailerByte()
            if byte == cr {
                state = .trailerLineFeed(final: true)
            } else if ASCIIBytes.isToken(byte) {
                trailerCount += 1
                if trailerCount > limits.maxHeaderCount { throw .trailersTooLarge }
                state = .trailerName(length: 1)
            } else {
                throw .malformedChunk  // obsolete folding (leading space), an empty name, a bare LF
            }
        case .trailerName(let length):
            try countTrailerByte()
            if byte == colon {
                state = .trailerValue
            } else if ASCIIBytes.isToken(byte) {
                state = .trailerName(length: length + 1)
            } else {
                throw .malformedChunk  // white space before the colon, a non-token byte
            }
        case .trailerValue:
            try countTrailerByte()
            if byte == cr {
                state = .trailerLineFeed(final: false)
            } else if (byte < 0x20 && byte != tab) || byte == 0x7F {
                throw .malformedChunk  // a bare LF, NUL or other control byte
            }
        case .trailerLineFeed(let final):
            guard byte == lf else { throw .malformedChunk }
            if final {
                state = .done
            } else {
                try countTrailerByte()
                state = .trailerStart
            }
        case .data, .done:
            break  // handled by `consume`
        }
    }

    private mutating func countLineByte() throws(HTTPParseError) {
        lineBytes += 1
        if lineBytes > Self.maxChunkLineBytes { throw .malformedChunk }
    }

    /// Trailers are header fields (RFC 9112 §7.1.2): the header block's limits hold for them.
    private mutating func countTrailerByte() throws(HTTPParseError) {
        trailerBytes += 1
        if trailerBytes > limits.maxHeaderBytes + 2 { throw .trailersTooLarge }
    }
}

private let cr = UInt8(ascii: "\r")
private let lf = UInt8(ascii: "\n")
private let tab = UInt8(ascii: "\t")
private let colon = UInt8(ascii: ":")
private let semicolon = UInt8(ascii: ";")

/// The value of an ASCII hex digit (`HEXDIG`, either case), or nil.
private func hexValue(_ byte: UInt8) -> Int? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte - UInt8(ascii: "0"))
    case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(byte - UInt8(ascii: "a") + 10)
    case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(byte - UInt8(ascii: "A") + 10)
    default: nil
    }
}
