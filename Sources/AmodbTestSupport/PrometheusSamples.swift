/// Samples read back from Prometheus text, so tests check `/metrics` as a scraper would.
package struct PrometheusSamples: Sendable {
    package struct Sample: Sendable {
        package var name: String
        package var labels: [String: String]
        package var value: Double
    }

    package private(set) var samples: [Sample] = []
    /// `# TYPE` lines: metric family → type.
    package private(set) var types: [String: String] = [:]

    /// Parses the exposition format; a malformed line is an error.
    package init(_ text: String) throws {
        for line in text.split(separator: "\n") where !line.isEmpty {
            if line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ")
                guard parts.count == 4 else { throw ParseError(line: String(line)) }
                types[String(parts[2])] = String(parts[3])
                continue
            }
            if line.hasPrefix("#") { continue }
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                throw ParseError(line: String(line))
            }
            let series = line[..<space]
            var labels: [String: String] = [:]
            let name: String
            if let brace = series.firstIndex(of: "{") {
                guard series.last == "}" else { throw ParseError(line: String(line)) }
                name = String(series[..<brace])
                var rest = series[series.index(after: brace)..<series.index(before: series.endIndex)]
                while !rest.isEmpty {
                    guard let equals = rest.firstIndex(of: "="), rest[rest.index(after: equals)] == "\"" else {
                        throw ParseError(line: String(line))
                    }
                    let key = String(rest[..<equals])
                    var index = rest.index(equals, offsetBy: 2)
                    var value = ""
                    while index < rest.endIndex, rest[index] != "\"" {
                        if rest[index] == "\\" { index = rest.index(after: index) }
                        value.append(rest[index])
                        index = rest.index(after: index)
                    }
                    guard index < rest.endIndex else { throw ParseError(line: String(line)) }
                    labels[key] = value
                    rest = rest[rest.index(after: index)...]
                    if rest.first == "," { rest = rest.dropFirst() }
                }
            } else {
                name = String(series)
            }
            samples.append(Sample(name: name, labels: labels, value: value))
        }
    }

    /// What went wrong parsing.
    package struct ParseError: Error, CustomStringConvertible {
        package let line: String
        package var description: String { "malformed exposition line: \(line)" }
    }

    /// A series a test asked for is not in the text at all: "== 0" must not pass for a
    /// metric that is missing.
    package struct MissingSeries: Error, CustomStringConvertible {
        package let name: String
        package let labels: [String: String]
        package var description: String {
            "no sample \(name)\(labels.isEmpty ? "" : "\(labels.sorted { $0.key < $1.key })") in the exposition text"
        }
    }

    /// The sum of the samples with this name and (at least) these labels; throws
    /// `MissingSeries` when there is none.
    package func value(_ name: String, _ labels: [String: String] = [:]) throws -> Double {
        let matching = samples.filter { sample in
            sample.name == name && labels.allSatisfy { sample.labels[$0.key] == $0.value }
        }
        guard !matching.isEmpty else { throw MissingSeries(name: name, labels: labels) }
        return matching.reduce(0) { $0 + $1.value }
    }
}
