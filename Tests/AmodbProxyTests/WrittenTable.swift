import Foundation
import Testing

/// A table a test writes into a document from the code (the settings, the routes): the
/// text between the lines `start` and `end` of the file at `path` must be `table`. With
/// `REGENERATE_SETTINGS_DOCS=1` it is written there instead; `command` is how the failure
/// says to do that.
func expectWrittenTable(
    _ table: String, in path: String, between start: String, and end: String, command: String,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let name = URL(fileURLWithPath: path).lastPathComponent
    let document = try String(contentsOfFile: path, encoding: .utf8)
    let opening = try #require(document.range(of: start + "\n"), "no table start in \(name)")
    let closing = try #require(
        document.range(of: "\n" + end, range: opening.upperBound..<document.endIndex), "no table end in \(name)")
    if ProcessInfo.processInfo.environment["REGENERATE_SETTINGS_DOCS"] == "1" {
        try document.replacingCharacters(in: opening.upperBound..<closing.lowerBound, with: table)
            .write(toFile: path, atomically: true, encoding: .utf8)
        return
    }
    #expect(
        String(document[opening.upperBound..<closing.lowerBound]) == table,
        "\(name)'s table is not the code's: \(command) rewrites it", sourceLocation: sourceLocation)
}
