import Foundation

/// The metric families docs/operations.md's tables list, read as an operator reads them:
/// the first table (every replica exports these) and the fleet's (only with Redis). Tests
/// hold the tables to `/metrics` and to the Grafana dashboard, so neither can name a
/// family the page does not explain.
package enum DocumentedMetrics {
    /// One family of a table.
    package struct Family: Sendable, Equatable {
        /// `amodb_proxy_…`, with the `…_used` shorthand expanded.
        package let name: String
        /// `counter`, `gauge` or `histogram`.
        package let type: String
        /// Listed in the fleet's table: exported only with `AMODB_REDIS_URL`.
        package let fleet: Bool
    }

    /// docs/operations.md beside this package.
    static let page = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "../../docs/operations.md")

    /// Every family the tables list, in their order.
    package static func families() throws -> [Family] {
        try families(in: String(contentsOf: page, encoding: .utf8))
    }

    /// The families of the metric tables in `text`: rows starting with a metric name; the
    /// first table of them is every replica's, the next the fleet's.
    package static func families(in text: String) -> [Family] {
        var families: [Family] = []
        var table = -1
        var inTable = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            guard line.hasPrefix("| `amodb_proxy_") else {
                inTable = inTable && line.hasPrefix("|")
                continue
            }
            if !inTable {
                table += 1
                inTable = true
            }
            let columns = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            var last = ""
            for name in columns[0].split(separator: "`").map(String.init)
            where name.hasPrefix("amodb_proxy_") || name.hasPrefix("…_") {
                let full = name.hasPrefix("…_") ? String(last[..<last.lastIndex(of: "_")!]) + name.dropFirst() : name
                families.append(Family(name: full, type: columns[1], fleet: table > 0))
                last = full
            }
        }
        return families
    }
}
