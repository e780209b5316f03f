import AmodbModels
import Foundation
import Testing

@testable import AmodbProxy

/// `docs/caching.md`'s table of routes against `RouteTable`: a route added, or one whose
/// lifetime, budget class or parameters change, fails here until the docs say so.
struct RouteTableDocumentationTests {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    private static let docsPath = root.appendingPathComponent("docs/caching.md").path

    /// The lines that open and close the generated table.
    private static let tableStart =
        "<!-- Written from Sources/AmodbModels/RouteTable.swift by RouteTableDocumentationTests: REGENERATE_SETTINGS_DOCS=1 swift test --filter RouteTableDocumentationTests rewrites it. -->"
    private static let tableEnd = "<!-- End of the written route table. -->"

    /// One row per entry, in the table's order.
    static var table: String {
        var rows = [
            "| path | served | parameters | fresh for | budget | amodb's 404 |",
            "|---|---|---|---|---|---|",
        ]
        for entry in RouteTable.entries {
            let parameters = entry.parameters.map { "`\($0.rawValue)`" }.joined(separator: ", ")
            let cells = [
                "`GET /3\(entry.template)`",
                entry.byDefault ? "always" : "`AMODB_ROUTES=\(entry.name)`",
                parameters.isEmpty ? "—" : parameters,
                "`\(entry.lifetime.setting)`",
                entry.budget.rawValue,
                entry.negativeCached ? "kept (`AMODB_NEGATIVE_TTL`)" : "passed on",
            ]
            rows.append("| " + cells.joined(separator: " | ") + " |")
        }
        return rows.joined(separator: "\n")
    }

    @Test func theDocsRouteTableIsWrittenFromTheTable() throws {
        try expectWrittenTable(
            Self.table, in: Self.docsPath, between: Self.tableStart, and: Self.tableEnd,
            command: "REGENERATE_SETTINGS_DOCS=1 swift test --filter RouteTableDocumentationTests")
    }
}
