/// One log line written as bytes in either format: JSON (`{"time":"…","method":"GET",…}`)
/// or text (`… method=GET route=… status=200`). The access log writes a line per request
/// this way straight into its writer's buffer, with no string built per field; events use
/// it through `LogFormat.line`.
///
/// The caller says how many bytes the fields can take at most; that room is made at the
/// end of the buffer once, the fields are written into it through a pointer
/// (`LogFields`), and what is left over is cut off. Appending byte by byte to an array
/// checks its uniqueness and capacity every time, which cost more than the line itself.
enum LogLine {
    /// Zeros to make room with: copying them is one `memcpy`, where appending a repeated
    /// zero goes a byte at a time.
    private static let zeros = [UInt8](repeating: 0, count: 4096)

    /// Writes one line at the end of `bytes` (a writer's pending buffer, or empty), in
    /// place: `fields` writes at most `room` bytes of fields, this adds the braces of a
    /// JSON object. Writing more than `room` stops the process rather than the memory
    /// past it.
    static func write(_ format: LogFormat, room: Int, into bytes: inout [UInt8], _ fields: (inout LogFields) -> Void) {
        let start = bytes.count
        var needed = room + 2
        zeros.withUnsafeBufferPointer { zeros in
            while needed > 0 {
                let count = min(needed, zeros.count)
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: zeros[..<count]))
                needed -= count
            }
        }
        let end = bytes.withUnsafeMutableBufferPointer { buffer in
            let base = buffer.baseAddress! + start
            var line = LogFields(format, at: base)
            if format == .json { line.put(UInt8(ascii: "{")) }
            fields(&line)
            if format == .json { line.put(UInt8(ascii: "}")) }
            let written = line.pointer - base
            precondition(written <= room + 2, "a log line wrote past the room it asked for")
            return start + written
        }
        bytes.removeSubrange(end...)
    }

    /// Most bytes a field of `name` whose value is text of `count` bytes takes: separator,
    /// quoted name, and the value quoted with every byte escaped.
    static func room(name: Int, text count: Int) -> Int {
        name + 4 + count * JSONText.maxBytesPerByte + 2
    }

    /// Most bytes a field of `name` whose value is a number takes.
    static func room(name: Int) -> Int {
        name + 4 + LogFields.maxNumberBytes
    }
}
