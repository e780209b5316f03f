/// Writes the Prometheus text exposition format (version 0.0.4): `# HELP`, `# TYPE`,
/// then one sample per line with escaped label values.
struct PrometheusText {
    private(set) var text = ""

    /// The `Content-Type` of the exposition.
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    typealias Labels = [(String, String)]

    private mutating func header(_ name: String, _ type: String, _ help: String) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
    }

    private mutating func sample(_ name: String, _ labels: Labels, _ value: Double) {
        text += name
        if !labels.isEmpty {
            text += "{" + labels.map { "\($0.0)=\"\(Self.escape($0.1))\"" }.joined(separator: ",") + "}"
        }
        text += " " + Self.format(value) + "\n"
    }

    /// A counter family.
    mutating func counter(_ name: String, _ help: String, _ samples: [(Labels, Double)]) {
        header(name, "counter", help)
        for (labels, value) in samples { sample(name, labels, value) }
    }

    /// A gauge family.
    mutating func gauge(_ name: String, _ help: String, _ samples: [(Labels, Double)]) {
        header(name, "gauge", help)
        for (labels, value) in samples { sample(name, labels, value) }
    }

    /// A histogram family: one histogram per label set.
    mutating func histogram(_ name: String, _ help: String, _ series: [(Labels, Histogram)]) {
        header(name, "histogram", help)
        for (labels, histogram) in series {
            let (cumulative, sum, count) = histogram.snapshot()
            for (bound, value) in zip(histogram.bounds, cumulative) {
                sample(name + "_bucket", labels + [("le", Self.format(bound))], Double(value))
            }
            sample(name + "_bucket", labels + [("le", "+Inf")], Double(count))
            sample(name + "_sum", labels, sum)
            sample(name + "_count", labels, Double(count))
        }
    }

    static func escape(_ value: String) -> String {
        var escaped = ""
        for character in value {
            switch character {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    static func format(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
        return String(value)
    }
}
