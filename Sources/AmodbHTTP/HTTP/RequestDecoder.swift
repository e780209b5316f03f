/// Reads whole requests from a connection's bytes: a head (`RequestHeadParser`), then its
/// body: `Content-Length` bytes are kept in the request (`HTTPRequest.body`, within
/// `maxBodyBytes`), a chunked body is read through `ChunkedBodyParser` and dropped. A pure, resumable value: it never touches a socket, so a
/// request fed whole, byte by byte or split anywhere gives the same events.
///
/// A request is complete, and handed on, only once its body has been read: a body that
/// is too large or malformed is answered instead of the request, and nothing of it is
/// ever parsed as the next head.
struct RequestDecoder: Sendable {
    /// What the bytes given so far amount to.
    enum Event: Sendable {
        /// Not enough bytes for the next step; call again when more arrive.
        case needMore
        /// A head that announces a body arrived; its body is being read (the connection
        /// answers `Expect: 100-continue` and starts the body's deadline here).
        case bodyFollows(ParsedHead)
        /// A whole request, body read.
        case request(ParsedHead)
    }

    /// Where the decoder is in the current request.
    enum Phase: Sendable, Equatable {
        /// Between requests, or inside a head.
        case head
        /// Inside the body of a request whose head arrived.
        case body
    }

    /// The rest of a body being read.
    private enum Body: Sendable {
        case length(remaining: Int)
        case chunked(ChunkedBodyParser)
    }

    private var heads: RequestHeadParser
    private let limits: HTTPLimits
    /// The head whose body is being read, with what remains of the body.
    private var pending: (head: ParsedHead, body: Body)?

    init(limits: HTTPLimits) {
        self.limits = limits
        heads = RequestHeadParser(limits: limits)
    }

    /// Whether the next bytes belong to a head or to a body.
    var phase: Phase { pending == nil ? .head : .body }

    /// Reads from `buffer[start...]`: returns the next event and how many bytes it used.
    /// Call again with the used bytes skipped until the event is `.needMore` (which may
    /// still have used body bytes). Throws `HTTPParseError` for anything malformed or over
    /// a limit; the connection must then be answered and closed.
    mutating func decode(_ buffer: [UInt8], from start: Int) throws(HTTPParseError) -> (event: Event, consumed: Int) {
        try decode(buffer.span.extracting(start...))
    }

    /// The same, from bytes in place: where they were read, when nothing was buffered before them.
    mutating func decode(_ bytes: Span<UInt8>) throws(HTTPParseError) -> (event: Event, consumed: Int) {
        guard let (head, body) = pending else {
            switch try heads.parse(bytes) {
            case .needMore:
                return (.needMore, 0)
            case .complete(let head, let consumed):
                switch head.body {
                case .length(0):
                    return (.request(head), consumed)
                case .length(let length):
                    var head = head
                    var body: [UInt8] = []
                    body.reserveCapacity(length)
                    head.request.body = body
                    pending = (head, .length(remaining: length))
                case .chunked:
                    var head = head
                    head.request.bodyWasChunked = true
                    pending = (head, .chunked(ChunkedBodyParser(limits: limits)))
                }
                return (.bodyFollows(head), consumed)
            }
        }
        let available = bytes.count
        switch body {
        case .length(let remaining):
            let used = min(remaining, available)
            var head = head
            pending = nil  // the body below is appended to the only copy of the head
            if used > 0 { head.request.body?.append(contentsOf: bytes.extracting(..<used).array()) }
            guard used == remaining else {
                pending = (head, .length(remaining: remaining - used))
                return (.needMore, used)
            }
            return (.request(head), used)
        case .chunked(var parser):
            let used = try parser.consume(bytes)
            guard parser.isComplete else {
                pending = (head, .chunked(parser))
                return (.needMore, used)
            }
            pending = nil
            return (.request(head), used)
        }
    }
}
