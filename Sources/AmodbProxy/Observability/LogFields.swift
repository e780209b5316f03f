import AmodbBytes
import Glibc

/// Writes the fields of one log line into room `LogLine` made: `,"name":value` in JSON,
/// ` name=value` in text. Every write goes through a `ByteWriter`, which checks that its
/// bytes fit before it makes them (docs/performance.md, "Invariants": the log line's bound).
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
    /// Where the line's bytes go: `LogLine` reads back how many were written.
    private(set) var writer: ByteWriter

    /// Fields in `format`, written by `writer`.
    init(_ format: LogFormat, into writer: ByteWriter) {
        json = format == .json
        self.writer = writer
    }

    /// Whether fields are written as JSON.
    var isJSON: Bool { json }

    /// The `time` field, now, first on every line; in text, written bare.
    mutating func time(_ time: inout LogTime) {
        openTime()
        time.write(to: &writer)
        closeTime()
    }

    /// The `time` field for a moment past, for a line written after the fact (`AccessLogLine`).
    mutating func time(_ time: inout LogTime, at moment: timespec) {
        openTime()
        time.write(moment, to: &writer)
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
    mutating func lead(_ name: String, _ value: String) {
        if json {
            self.name(name)
            put(quoting: value)
        } else {
            separate()
            writer.write(value)
        }
    }

    /// Text a caller may control (a method, a path, a message's field): escaped in JSON;
    /// in text, bare unless it is empty or holds a space, `"` or `=`, then as a JSON string.
    @inline(__always)
    mutating func text(_ name: StaticString, _ value: String) {
        self.name(name)
        put(text: value)
    }

    /// As `text(_:_:)`, for a name known only at run time (an event's fields).
    mutating func text(_ name: String, _ value: String) {
        self.name(name)
        put(text: value)
    }

    /// A value from a fixed set the code owns (a route template, `hit`, `gzip`): never
    /// holds a quote, a backslash, a control character, a space or `=`, so it is copied.
    @inline(__always)
    mutating func label(_ name: StaticString, _ value: StaticString) {
        self.name(name)
        if json { put(UInt8(ascii: "\"")) }
        writer.write(value)
        if json { put(UInt8(ascii: "\"")) }
    }

    /// As `label(_:_:)`, for a label kept as a string (a content coding).
    @inline(__always)
    mutating func label(_ name: StaticString, _ value: String) {
        self.name(name)
        if json { put(UInt8(ascii: "\"")) }
        writer.write(value)
        if json { put(UInt8(ascii: "\"")) }
    }

    /// An integer field.
    @inline(__always)
    mutating func integer(_ name: StaticString, _ value: Int) {
        self.name(name)
        put(integer: value)
    }

    /// As `integer(_:_:)`, for a name known only at run time.
    mutating func integer(_ name: String, _ value: Int) {
        self.name(name)
        put(integer: value)
    }

    /// A number with at most three decimals, trailing zeros dropped (`0.123`, `12.5`, `3`).
    mutating func number(_ name: String, _ value: Double) {
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
        writer.write(byte)
    }

    /// Constant text of a line (a JSON line's `,"status":`), copied as it is.
    @inline(__always)
    mutating func put(_ text: StaticString) {
        writer.write(text)
    }

    /// Text kept as a string that needs no escaping (a route's label), copied as it is.
    @inline(__always)
    mutating func put(string text: String) {
        writer.write(text)
    }

    /// `value` as a JSON string, by `JSONText`'s rule.
    @inline(__always)
    mutating func put(quoting value: String) {
        JSONText.write(quoting: value, to: &writer)
    }

    /// `value` with at most three decimals, trailing zeros dropped, in integer arithmetic:
    /// printing a `Double` costs more than the rest of an access-log line.
    mutating func put(number value: Double) {
        let scaled = (value * 1000).rounded()
        guard scaled.isFinite, abs(scaled) < 1e15 else {
            writer.write(String(scaled / 1000))
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
        writer.write(decimal: fraction, width: digits)
    }

    /// `value` in decimal, as the server writes its numbers (`ByteWriter.write(decimal:)`).
    @inline(__always)
    mutating func put(integer value: Int) {
        writer.write(decimal: value)
    }

    /// A text field's value: a JSON string in JSON; in text, bare unless it is empty or
    /// holds a space, `"` or `=`.
    private mutating func put(text value: String) {
        if json || Self.needsQuotes(value) {
            put(quoting: value)
        } else {
            writer.write(value)
        }
    }

    /// Whether text written bare in a text line would not read back as one value.
    private static func needsQuotes(_ value: String) -> Bool {
        var value = value
        return value.withUTF8 { bytes in
            bytes.isEmpty
                || bytes.contains {
                    $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "=")
                }
        }
    }

    /// `,"name":` in JSON, ` name=` in text.
    @inline(__always)
    private mutating func name(_ name: StaticString) {
        openName()
        writer.write(name)
        closeName()
    }

    /// As `name(_:)`, for a name known only at run time.
    private mutating func name(_ name: String) {
        openName()
        writer.write(name)
        closeName()
    }

    /// What comes before a field's name: `,"` in JSON (`"` first), the separator in text.
    @inline(__always)
    private mutating func openName() {
        if json {
            if !first { put(UInt8(ascii: ",")) }
            put(UInt8(ascii: "\""))
        } else {
            separate()
        }
        first = false
    }

    /// What comes after a field's name: `":` in JSON, `=` in text.
    @inline(__always)
    private mutating func closeName() {
        if json {
            put(UInt8(ascii: "\""))
            put(UInt8(ascii: ":"))
        } else {
            put(UInt8(ascii: "="))
        }
    }

    /// The space between fields of a text line.
    @inline(__always)
    private mutating func separate() {
        if !first { put(UInt8(ascii: " ")) }
        first = false
    }
}
