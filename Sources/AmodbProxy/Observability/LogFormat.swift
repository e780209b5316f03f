/// How log lines are written.
public enum LogFormat: String, Sendable, CaseIterable {
    /// One JSON object per line (for log collectors).
    case json
    /// `time level message key=value …` (for people at a terminal).
    case text

    /// One line from ordered fields (`time`, `level`/`method`, …); values are strings or numbers.
    func line(_ fields: [(String, LogValue)]) -> String {
        switch self {
        case .json:
            // Appended into one string: the access log writes a line per request.
            var line = "{"
            line.reserveCapacity(256)
            for (index, (name, value)) in fields.enumerated() {
                if index > 0 { line += "," }
                line += "\""
                line += name
                line += "\":"
                if case .string(let text) = value { JSONText.append(quoting: text, to: &line) } else { line += value.plain }
            }
            line += "}"
            return line
        case .text:
            return fields.map { $0.0 == "time" || $0.0 == "level" || $0.0 == "message" ? $0.1.plain : "\($0.0)=\($0.1.quotedIfNeeded)" }
                .joined(separator: " ")
        }
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

    var plain: String {
        switch self {
        case .string(let text): text
        case .number(let value): String(format3(value))
        case .integer(let value): String(value)
        }
    }

    var quotedIfNeeded: String {
        guard case .string(let text) = self else { return plain }
        return text.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" }) || text.isEmpty ? json : text
    }

    /// JSON text: numbers bare, strings quoted and escaped.
    var json: String {
        guard case .string(let text) = self else { return plain }
        return JSONText.quoted(text)
    }

    /// At most three decimals, trailing zeros dropped (`0.123`, `12.5`, `3`), in integer
    /// arithmetic: printing a `Double` costs more than the rest of an access-log line.
    private func format3(_ value: Double) -> String {
        let scaled = (value * 1000).rounded()
        guard scaled.isFinite, abs(scaled) < 1e15 else { return String(scaled / 1000) }
        let thousandths = Int(scaled)
        let whole = String(abs(thousandths) / 1000)
        var fraction = abs(thousandths) % 1000
        let sign = thousandths < 0 ? "-" : ""
        guard fraction != 0 else { return sign + whole }
        var digits = 3
        while fraction % 10 == 0 {
            fraction /= 10
            digits -= 1
        }
        let text = String(fraction)
        return sign + whole + "." + String(repeating: "0", count: digits - text.count) + text
    }
}
