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
    public private(set) var bytes: [UInt8] = []

    /// No lines yet.
    public init() {}

    /// The `shared` lines, and room for `capacity` bytes of lines of this answer, so that
    /// the lines appended by everyone who adds to an answer go into one allocation.
    public init(shared: ArraySlice<UInt8> = [], reservingCapacity capacity: Int) {
        self.shared = shared
        bytes.reserveCapacity(capacity)
    }

    /// Whether no line was rendered.
    public var isEmpty: Bool { shared.isEmpty && bytes.isEmpty }

    /// The bytes of all the lines, shared and this answer's.
    public var count: Int { shared.count + bytes.count }

    /// Writes every line, the shared ones first, to `writer`, which has room for `count` bytes.
    func write(to writer: inout Writer) {
        shared.withUnsafeBytes { writer.write($0) }
        bytes.withUnsafeBytes { writer.write($0) }
    }

    /// Appends the lines `render` writes. It runs twice: once to count the bytes (at most),
    /// once to write them into a buffer on the stack, which is then appended in one copy (many
    /// small appends to an array cost more than the rest of a cache hit). Inlinable, as
    /// are the writer's methods: the responder's lines are written by code specialized
    /// in its own module, not through a call per piece.
    @inlinable
    public mutating func append(_ render: (inout Writer) -> Void) {
        var counter = Writer(counting: ())
        render(&counter)
        let count = counter.count
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count) { buffer in
            var writer = Writer(into: buffer)
            render(&writer)
            append(written: UnsafeBufferPointer(rebasing: buffer[..<writer.count]))
        }
    }

    /// Appends bytes a writer wrote.
    @usableFromInline
    mutating func append(written: UnsafeBufferPointer<UInt8>) {
        bytes.append(contentsOf: written)
    }

    /// Appends `Name: value\r\n`.
    public mutating func append(_ name: StaticString, _ value: String) {
        append { $0.line(name, value) }
    }

    /// Writes lines: counts their bytes (at most), or writes them into a buffer sized by that count.
    public struct Writer {
        /// Where to write; `nil` while counting.
        @usableFromInline let buffer: UnsafeMutableBufferPointer<UInt8>?
        /// Bytes written (or counted) so far.
        @usableFromInline var written = 0

        /// Bytes written (or counted) so far.
        @inlinable public var count: Int { written }

        @usableFromInline
        init(counting: Void) {
            buffer = nil
        }

        @usableFromInline
        init(into buffer: UnsafeMutableBufferPointer<UInt8>) {
            self.buffer = buffer
        }

        /// Writes `Name: value\r\n`.
        @inlinable
        public mutating func line(_ name: StaticString, _ value: String) {
            write(name)
            write(": ")
            write(value)
            write("\r\n")
        }

        /// Writes `start` (the name, the colon and any text before the number, such as
        /// `Age: `), the number's decimal digits and CRLF.
        @inlinable
        public mutating func line(_ start: StaticString, number: Int) {
            write(start)
            write(number)
            write("\r\n")
        }

        /// Writes a static string's bytes.
        @inlinable
        public mutating func write(_ text: StaticString) {
            write(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
        }

        /// Writes a string's UTF-8 bytes.
        @inlinable
        public mutating func write(_ text: String) {
            guard buffer != nil else {
                written += text.utf8.count
                return
            }
            // In place for a native string (no copy of it to get at its bytes).
            if text.utf8.withContiguousStorageIfAvailable({ write(UnsafeRawBufferPointer($0)) }) == nil {
                var text = text
                text.withUTF8 { write(UnsafeRawBufferPointer($0)) }
            }
        }

        /// Writes a number's decimal digits (with a `-` when negative). Counting, it counts
        /// the most any `Int` takes (20, `-9223372036854775808`) without writing the digits:
        /// the count only sizes the buffer the lines are written into.
        @inlinable
        public mutating func write(_ number: Int) {
            guard buffer != nil else {
                written += Self.maxNumberBytes
                return
            }
            DecimalDigits.withDigits(of: number) { write(UnsafeRawBufferPointer($0)) }
        }

        /// Most bytes a number's digits take.
        @usableFromInline static let maxNumberBytes = 20

        @inlinable @inline(__always)
        mutating func write(_ source: UnsafeRawBufferPointer) {
            guard let start = source.baseAddress, source.count > 0 else { return }
            if let buffer {
                // The count was taken with the same inputs: running past it is a bug here.
                precondition(written + source.count <= buffer.count, "RenderedFields wrote more than it counted")
                UnsafeMutableRawPointer(buffer.baseAddress! + written).copyMemory(from: start, byteCount: source.count)
            }
            written += source.count
        }
    }
}
