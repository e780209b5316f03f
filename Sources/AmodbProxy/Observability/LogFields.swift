import AmodbHTTP
import Glibc

/// Writes the fields of one log line through a pointer into room `LogLine` made:
/// `,"name":value` in JSON, ` name=value` in text. Each write checks that its bytes fit
/// before it makes them (one comparison for a byte, a copy or a quoted text), then writes
/// them unchecked (docs/performance.md, "Invariants": the log line's bound).
///
/// Text that a caller may control is escaped (JSON) or quoted when it must be (text); a
/// label from a fixed set (a route template, a cache outcome, a content coding) is
/// copied as it is. Neither is scrubbed of secrets here: that is the caller's part.
struct LogFields {
    /// Most bytes a number takes: `put(number:)` (`Double`'s description of a huge value
    /// is at most 24) or an `Int` (`-9223372036854775808`, 20).
    static let maxNumberBytes = 32

    private let json: Bool
    private var first = true
    /// Where the next byte goes.
    private(set) var pointer: UnsafeMutablePointer<UInt8>
    /// Just past the room: no write reaches it.
    private let end: UnsafeMutablePointer<UInt8>

    /// Fields in `format` written into `room`; `continuing` a line begun elsewhere (the
    /// first field then gets its separator too).
    init(_ format: LogFormat, into room: UnsafeMutableBufferPointer<UInt8>, continuing: Bool = false) {
        json = format == .json
        first = !continuing
        pointer = room.baseAddress!
        end = pointer + room.count
    }

    /// Stops the process before `count` more bytes would be written past the room: a line
    /// whose fields outgrew the bound its writer computed is a bug, and the stack past the
    /// room is not the line's.
    @inline(__always)
    private func reserve(_ count: Int) {
        precondition(end - pointer >= count, "a log line's fields outgrew the room computed for them")
    }

    /// Whether fields are written as JSON.
    var isJSON: Bool { json }

    /// The `time` field, now, first on every line; in text, written bare.
    mutating func time(_ time: inout LogTime) {
        openTime()
        time.write(to: &self)
        closeTime()
    }

    /// The `time` field for a moment past, for a line written after the fact (`AccessLogLine`).
    mutating func time(_ time: inout LogTime, at moment: timespec) {
        openTime()
        time.write(moment, to: &self)
        closeTime()
    }

    /// What comes before a time: `"time":"` in JSON, the separator in text.
    @inline(__always)
    private mutating func openTime() {
        if json {
            name("time")
            put(UInt8(ascii: "\""))
        } else {
            separate()
        }
    }

    /// What comes after a time: its closing quote in JSON.
    @inline(__always)
    private mutating func closeTime() {
        if json { put(UInt8(ascii: "\"")) }
    }

    /// A field that starts a line people read (`level`, `message`): bare in text, a JSON
    /// string in JSON.
    mutating func lead(_ name: UnsafeBufferPointer<UInt8>, _ value: String) {
        var value = value
        value.withUTF8 { value in
            if json {
                self.name(name)
                put(quoting: value)
            } else {
                separate()
                put(value)
            }
        }
    }

    /// Text a caller may control (a method, a path, a message's field): escaped in JSON;
    /// in text, bare unless it is empty or holds a space, `"` or `=`, then as a JSON string.
    @inline(__always)
    mutating func text(_ name: StaticString, _ value: String) {
        text(Self.bytes(name), value)
    }

    /// As `text(_:_:)`, for a name known only at run time (an event's fields).
    @inline(__always)
    mutating func text(_ name: UnsafeBufferPointer<UInt8>, _ value: String) {
        var value = value
        value.withUTF8 { value in
            self.name(name)
            if json || value.isEmpty
                || value.contains(where: {
                    $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "=")
                })
            {
                put(quoting: value)
            } else {
                put(value)
            }
        }
    }

    /// A value from a fixed set the code owns (a route template, `hit`, `gzip`): never
    /// holds a quote, a backslash, a control character, a space or `=`, so it is copied.
    @inline(__always)
    mutating func label(_ name: StaticString, _ value: StaticString) {
        self.name(name)
        if json { put(UInt8(ascii: "\"")) }
        put(Self.bytes(value))
        if json { put(UInt8(ascii: "\"")) }
    }

    /// As `label(_:_:)`, for a label kept as a string (a content coding).
    @inline(__always)
    mutating func label(_ name: StaticString, _ value: String) {
        var value = value
        self.name(name)
        if json { put(UInt8(ascii: "\"")) }
        value.withUTF8 { put($0) }
        if json { put(UInt8(ascii: "\"")) }
    }

    /// An integer field.
    @inline(__always)
    mutating func integer(_ name: StaticString, _ value: Int) {
        integer(Self.bytes(name), value)
    }

    /// As `integer(_:_:)`, for a name known only at run time.
    @inline(__always)
    mutating func integer(_ name: UnsafeBufferPointer<UInt8>, _ value: Int) {
        self.name(name)
        put(integer: value)
    }

    /// A number with at most three decimals, trailing zeros dropped (`0.123`, `12.5`, `3`).
    mutating func number(_ name: UnsafeBufferPointer<UInt8>, _ value: Double) {
        self.name(name)
        put(number: value)
    }

    /// A duration field in milliseconds (`put(milliseconds:)`).
    @inline(__always)
    mutating func milliseconds(_ name: StaticString, nanoseconds: UInt64) {
        self.name(name)
        put(milliseconds: nanoseconds)
    }

    /// Milliseconds from a duration in nanoseconds, as `number` writes them. The
    /// division is the one the seconds always went through, so every duration rounds to
    /// the same thousandth it always did.
    @inline(__always)
    mutating func put(milliseconds nanoseconds: UInt64) {
        put(number: Double(nanoseconds) / 1e9 * 1000)
    }

    /// One byte.
    @inline(__always)
    mutating func put(_ byte: UInt8) {
        reserve(1)
        pointer.pointee = byte
        pointer += 1
    }

    /// Bytes as they are. Most are short (a field's name, a label, an address), and a
    /// call to `memmove` for each cost more than the copy: up to 16 bytes are copied with
    /// two overlapping loads and stores. The source is never the line's own room.
    @inline(__always)
    mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress else { return }
        let count = bytes.count
        reserve(count)
        let source = UnsafeRawPointer(base)
        let target = UnsafeMutableRawPointer(pointer)
        switch count {
        case 8...16:
            let head = source.loadUnaligned(as: UInt64.self)
            let tail = source.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
            target.storeBytes(of: head, as: UInt64.self)
            target.storeBytes(of: tail, toByteOffset: count - 8, as: UInt64.self)
        case 4..<8:
            let head = source.loadUnaligned(as: UInt32.self)
            let tail = source.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
            target.storeBytes(of: head, as: UInt32.self)
            target.storeBytes(of: tail, toByteOffset: count - 4, as: UInt32.self)
        case 0..<4:
            for index in 0..<count { pointer[index] = base[index] }
        default:
            pointer.update(from: base, count: count)
        }
        pointer += count
    }

    /// The bytes of a literal of two or more characters (every name and label the logs
    /// use): such a literal is kept as a pointer to its UTF-8, read without a closure.
    @inline(__always)
    static func bytes(_ text: StaticString) -> UnsafeBufferPointer<UInt8> {
        precondition(text.hasPointerRepresentation, "a log literal of one character")
        return UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
    }

    /// Constant text of a line (a JSON line's `,"status":`), copied as it is.
    @inline(__always)
    mutating func put(_ text: StaticString) {
        put(Self.bytes(text))
    }

    /// `value` as a JSON string, by `JSONText`'s rule.
    @inline(__always)
    mutating func put(quoting value: String) {
        var value = value
        value.withUTF8 { put(quoting: $0) }
    }

    /// `value` with at most three decimals, trailing zeros dropped, in integer arithmetic:
    /// printing a `Double` costs more than the rest of an access-log line.
    mutating func put(number value: Double) {
        let scaled = (value * 1000).rounded()
        guard scaled.isFinite, abs(scaled) < 1e15 else {
            var text = String(scaled / 1000)
            text.withUTF8 { put($0) }
            return
        }
        let thousandths = Int(scaled)
        if thousandths < 0 { put(UInt8(ascii: "-")) }
        put(integer: abs(thousandths) / 1000)
        var fraction = abs(thousandths) % 1000
        guard fraction != 0 else { return }
        var digits = 3
        while fraction % 10 == 0 {
            fraction /= 10
            digits -= 1
        }
        put(UInt8(ascii: "."))
        var divisor = 1
        for _ in 1..<digits { divisor *= 10 }
        while divisor > 0 {
            put(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: fraction / divisor % 10))
            divisor /= 10
        }
    }

    /// `value` in decimal, as the server writes its numbers (`DecimalDigits`).
    @inline(__always)
    mutating func put(integer value: Int) {
        DecimalDigits.withDigits(of: value) { put($0) }
    }

    /// `bytes` as a JSON string, by `JSONText`'s rule.
    private mutating func put(quoting bytes: UnsafeBufferPointer<UInt8>) {
        reserve(bytes.count * JSONText.maxBytesPerByte + 2)
        pointer += JSONText.write(quoting: bytes, to: pointer)
    }

    @inline(__always)
    private mutating func name(_ name: StaticString) {
        self.name(Self.bytes(name))
    }

    /// `,"name":` in JSON, ` name=` in text.
    @inline(__always)
    private mutating func name(_ name: UnsafeBufferPointer<UInt8>) {
        if json {
            if !first { put(UInt8(ascii: ",")) }
            put(UInt8(ascii: "\""))
            put(name)
            put(UInt8(ascii: "\""))
            put(UInt8(ascii: ":"))
        } else {
            separate()
            put(name)
            put(UInt8(ascii: "="))
        }
        first = false
    }

    /// The space between fields of a text line.
    @inline(__always)
    private mutating func separate() {
        if !first { put(UInt8(ascii: " ")) }
        first = false
    }
}
