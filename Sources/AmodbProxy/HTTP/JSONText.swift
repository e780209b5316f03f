/// Writing JSON text by hand where a `JSONEncoder` per call would cost too much (error
/// bodies under a flood, log lines): one escaping rule for both.
enum JSONText {
    /// `text` as a JSON string: quoted, with `"`, `\\` and control characters escaped (RFC 8259 §7).
    static func quoted(_ text: String) -> String {
        var quoted = ""
        quoted.reserveCapacity(text.utf8.count + 2)
        append(quoting: text, to: &quoted)
        return quoted
    }

    /// Appends `text` as a JSON string to `output`, with no string built in between (log
    /// lines append every field this way).
    static func append(quoting text: String, to output: inout String) {
        output += "\""
        // Most text (every log field but a hostile one) needs no escape: one scan of its
        // bytes and one copy, instead of a scalar at a time (a third of a cache hit's cost).
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") || $0 < 0x20 }) else {
            output += text
            output += "\""
            return
        }
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }
}
