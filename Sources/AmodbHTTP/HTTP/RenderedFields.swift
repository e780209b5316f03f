public import AmodbBytes

/// Header field lines a responder renders as bytes itself (`Name: value\r\n` each), for
/// answers it sends so often that building a `String` per field would cost more than the
/// rest of the answer: constant text is copied from static strings, numbers (an age, a
/// lifetime) are written as digits. The serializer writes them as they are, right after
/// the status line and before `HTTPResponse.headers`.
///
/// They must not hold `Content-Length`, `Connection` or `Content-Encoding`, which the
/// server writes itself from the response's framing and `contentEncoding`, nor, in an
/// answer without content (a 304), `Content-Type`: the server cannot take a line back out.
/// (docs/performance.md, "Invariants": what `RenderedFields` may carry.)
public struct RenderedFields: Sendable {
    /// Lines rendered once and shared by every answer that sends them (a stored answer's
    /// constant fields): written first, then `bytes`. Referenced, never copied per answer.
    public private(set) var shared: ArraySlice<UInt8> = []
    /// The lines rendered for this answer, each ending in CRLF.
    @inlinable public var bytes: [UInt8] { lines }
    /// `bytes`, stored where the inlined `append` can write to them.
    @usableFromInline var lines: [UInt8] = []

    /// No lines yet.
    public init() {}

    /// The `shared` lines, and room for `capacity` bytes of lines of this answer, so that
    /// the lines appended by everyone who adds to an answer go into one allocation.
    public init(shared: ArraySlice<UInt8> = [], reservingCapacity capacity: Int) {
        self.shared = shared
        lines.reserveCapacity(capacity)
    }

    /// Whether no line was rendered.
    public var isEmpty: Bool { shared.isEmpty && lines.isEmpty }

    /// The bytes of all the lines, shared and this answer's.
    public var count: Int { shared.count + lines.count }

    /// Writes every line, the shared ones first, to `writer`, which has room for `count` bytes.
    func write(to writer: inout ByteWriter) {
        writer.write(shared)
        writer.write(lines)
    }

    /// Appends the lines `render` writes. It runs twice: once counting the bytes (at most),
    /// once writing them into a buffer on the stack of that size, which is then appended in
    /// one copy (many small appends to an array cost more than the rest of a cache hit).
    /// Inlinable, as are the writer's methods: the responder's lines are written by code
    /// specialized in its own module, not through a call per piece.
    @inlinable
    public mutating func append(_ render: (inout ByteWriter) -> Void) {
        var counter = ByteWriter.counting
        render(&counter)
        ByteWriter.append(to: &lines, atMost: counter.count, render)
    }

    /// Appends `Name: value\r\n`.
    public mutating func append(_ name: StaticString, _ value: String) {
        append { $0.line(name, value) }
    }
}

extension ByteWriter {
    /// Writes a header field line, `Name: value\r\n`.
    @inlinable
    public mutating func line(_ name: StaticString, _ value: String) {
        write(name)
        write(": ")
        write(value)
        write("\r\n")
    }

    /// Writes a header field line whose value ends in a number: `start` (the name, the colon
    /// and any text before the number, such as `Age: `), the number's decimal digits and CRLF.
    /// Counted, the number counts at its widest.
    @inlinable
    public mutating func line(_ start: StaticString, number: Int) {
        write(start)
        write(decimal: number)
        write("\r\n")
    }
}
