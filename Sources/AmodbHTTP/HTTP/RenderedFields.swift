/// Header field lines a responder renders as bytes itself (`Name: value\r\n` each), for
/// answers it sends so often that building a `String` per field would cost more than the
/// rest of the answer: constant lines are copied from bytes made once, numbers (an age, a
/// lifetime) are written as digits. The serializer writes them as they are, right after
/// the status line and before `HTTPResponse.headers`.
///
/// They must not hold `Content-Length`, `Connection` or `Content-Encoding`, which the
/// server writes itself from the response's framing and `contentEncoding`.
public struct RenderedFields: Sendable {
    /// The lines so far, each ending in CRLF.
    public private(set) var bytes: [UInt8] = []

    /// No lines yet.
    public init() {}

    /// Whether no line was rendered.
    public var isEmpty: Bool { bytes.isEmpty }

    /// Makes room for `count` more bytes at once, so that appending them allocates once.
    public mutating func reserveCapacity(_ count: Int) {
        bytes.reserveCapacity(bytes.count + count)
    }

    /// Appends whole lines rendered earlier (each ending in CRLF).
    public mutating func append(lines: [UInt8]) {
        bytes.append(contentsOf: lines)
    }

    /// Appends `Name: value\r\n`.
    public mutating func append(_ name: StaticString, _ value: String) {
        append(name)
        bytes.append(contentsOf: ": ".utf8)
        bytes.append(contentsOf: value.utf8)
        bytes.append(contentsOf: "\r\n".utf8)
    }

    /// Appends a line that ends in a number: `start` (the name, colon and any text before
    /// the number, such as `Age: `), the number's decimal digits, CRLF.
    public mutating func append(_ start: StaticString, number: Int) {
        append(start)
        DecimalDigits.append(number, to: &bytes)
        bytes.append(contentsOf: "\r\n".utf8)
    }

    /// Appends a static string's bytes.
    private mutating func append(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Renders fields as lines, once, for `append(lines:)`.
    public static func lines(_ fields: KeyValuePairs<StaticString, String>) -> [UInt8] {
        var rendered = RenderedFields()
        for (name, value) in fields {
            rendered.append(name, value)
        }
        return rendered.bytes
    }
}
