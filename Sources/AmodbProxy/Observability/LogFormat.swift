/// How log lines are written.
package enum LogFormat: String, Sendable, CaseIterable {
    /// One JSON object per line (for log collectors).
    case json
    /// `time level message key=value …` (for people at a terminal).
    case text

    /// One line from ordered fields (`time`, `level`/`method`, …); values are strings or numbers.
    /// `time`, `level` and `message` lead a text line bare; other strings are caller text.
    func line(_ fields: [(String, LogValue)]) -> String {
        var maxBytes = 0
        for (name, value) in fields {
            switch value {
            case .string(let text): maxBytes += LogLine.maxBytes(name: name.utf8.count, text: text.utf8.count)
            case .number, .integer: maxBytes += LogLine.maxBytes(name: name.utf8.count)
            }
        }
        var bytes: [UInt8] = []
        LogLine.write(self, maxBytes: maxBytes, into: &bytes) { line in
            for (name, value) in fields {
                switch value {
                case .string(let text) where Self.isLead(name): line.lead(name, text)
                case .string(let text): line.text(name, text)
                case .number(let number): line.number(name, number)
                case .integer(let integer): line.integer(name, integer)
                }
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `time`, `level` and `message` lead a text line, bare.
    private static func isLead(_ name: String) -> Bool {
        name == "time" || name == "level" || name == "message"
    }
}

/// A log field's value.
enum LogValue: Sendable, ExpressibleByStringLiteral {
    case string(String)
    case number(Double)
    case integer(Int)

    init(stringLiteral value: String) {
        self = .string(value)
    }

    /// The value as written bare: numbers with at most three decimals.
    var plain: String {
        switch self {
        case .string(let text): return text
        case .number(let value):
            var bytes: [UInt8] = []
            LogLine.write(.text, maxBytes: LogFields.maxNumberBytes, into: &bytes) { $0.put(number: value) }
            return String(decoding: bytes, as: UTF8.self)
        case .integer(let value): return String(value)
        }
    }
}
