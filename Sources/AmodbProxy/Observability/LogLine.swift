import AmodbBytes

/// One log line written as bytes in either format: JSON (`{"time":"…","method":"GET",…}`)
/// or text (`… method=GET route=… status=200`). The access log writes a line per request
/// this way into its writer's buffer, with no string built per field; events use it
/// through `LogFormat.line`.
///
/// The caller says how many bytes the fields can take at most; the fields are written
/// into that much room on the stack (`LogFields`, through a `ByteWriter`, which checks each
/// write against the room before it makes it), and the line is appended with one copy.
/// Appending byte by byte to an array checks its uniqueness and capacity every time, which
/// cost more than the line itself.
enum LogLine {
    /// Appends one line to `bytes` (a writer's pending buffer, or empty): `fields` writes
    /// at most `maxBytes` bytes of fields, this adds the braces of a JSON object. A write past
    /// `maxBytes` stops the process before it touches the memory past the room
    /// (docs/performance.md, "Invariants": the log line's bound).
    static func write(
        _ format: LogFormat, maxBytes: Int, into bytes: inout [UInt8], _ fields: (inout LogFields) -> Void
    ) {
        ByteWriter.append(to: &bytes, atMost: maxBytes + 2) { writer in
            var line = LogFields(format, into: writer)
            if format == .json { line.put(UInt8(ascii: "{")) }
            fields(&line)
            if format == .json { line.put(UInt8(ascii: "}")) }
            writer = line.writer
        }
    }

    /// Most bytes a field of `name` whose value is text of `count` bytes takes: separator,
    /// quoted name, and the value quoted with every byte escaped.
    static func maxBytes(name: Int, text count: Int) -> Int {
        name + 4 + count * JSONText.maxBytesPerByte + 2
    }

    /// Most bytes a field of `name` whose value is a number takes.
    static func maxBytes(name: Int) -> Int {
        name + 4 + LogFields.maxNumberBytes
    }
}
