import Foundation
import Testing

@testable import AmodbProxy

/// `docs/configuration.md`'s table of settings and `config/amodb-proxy.conf` against the
/// settings tables: a setting added, renamed or given another default fails here until
/// both say so.
struct SettingsDocumentationTests {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    private static let docsPath = root.appendingPathComponent("docs/configuration.md").path
    private static let examplePath = root.appendingPathComponent("config/amodb-proxy.conf").path

    /// The lines that open and close the generated table in `docs/configuration.md`.
    private static let tableStart =
        "<!-- Written from Sources/AmodbProxy/Configuration/Settings/ by SettingsDocumentationTests: REGENERATE_SETTINGS_DOCS=1 swift test --filter SettingsDocumentationTests rewrites it. -->"
    private static let tableEnd = "<!-- End of the written table. -->"

    /// The docs table: one row per setting, in the settings' order, its default from the
    /// configuration as `--check-config` prints it.
    static var table: String {
        let defaults = ProxyConfiguration.defaults
        var rows = [
            "| environment | flag | default | accepts | meaning |",
            "|---|---|---|---|---|",
        ]
        for setting in ConfigurationLoader.settings {
            let value = setting.show(defaults)
            let cells = [
                "`\(setting.variable)`", setting.flag.isEmpty ? "—" : "`\(setting.flag)`",
                value.isEmpty ? "—" : "`\(value)`", setting.accepts, setting.doc,
            ]
            rows.append("| " + cells.joined(separator: " | ") + " |")
        }
        return rows.joined(separator: "\n")
    }

    @Test func theDocsTableIsWrittenFromTheSettings() throws {
        try expectWrittenTable(
            Self.table, in: Self.docsPath, between: Self.tableStart, and: Self.tableEnd,
            command: "REGENERATE_SETTINGS_DOCS=1 swift test --filter SettingsDocumentationTests")
    }

    /// The example file's `# NAME=value` lines, each with its line number.
    private func exampleLines() throws -> [(name: String, value: String, line: Int)] {
        let text = try String(contentsOfFile: Self.examplePath, encoding: .utf8)
        var found: [(name: String, value: String, line: Int)] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            guard line.hasPrefix("# "), let equals = line.firstIndex(of: "=") else { continue }
            let name = line[line.index(line.startIndex, offsetBy: 2)..<equals]
            guard let first = name.first, first.isUppercase,
                name.allSatisfy({ $0.isUppercase || $0.isNumber || $0 == "_" })
            else { continue }
            found.append((String(name), String(line[line.index(after: equals)...]), number + 1))
        }
        return found
    }

    @Test func theExampleFileShowsEverySettingOnceWithItsDefaultOrExample() throws {
        let lines = try exampleLines()
        let defaults = ProxyConfiguration.defaults
        for setting in ConfigurationLoader.settings {
            let shown = lines.filter { $0.name == setting.variable }
            #expect(shown.count == 1, "config/amodb-proxy.conf shows \(setting.variable) \(shown.count) times")
            for line in shown {
                #expect(
                    line.value == setting.example ?? setting.show(defaults),
                    "config/amodb-proxy.conf:\(line.line): \(setting.variable)")
            }
        }
        let known = Set(ConfigurationLoader.settings.map(\.variable))
        for line in lines where !known.contains(line.name) {
            Issue.record("config/amodb-proxy.conf:\(line.line): \(line.name) is no setting")
        }
    }

    @Test func theExampleFileWithEveryLineInForceReadsWithoutError() throws {
        // Key files are left out: the example paths are a container's, not this machine's.
        let secretFiles = Set(ConfigurationLoader.settings.filter { $0.secrecy == .secretFile }.map(\.variable))
        let text = try exampleLines().filter { !secretFiles.contains($0.name) }.map { "\($0.name)=\($0.value)" }
            .joined(separator: "\n")
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("amodb-\(UUID().uuidString)").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let command = try ConfigurationLoader.load(arguments: ["--check-config", "--config", path], environment: [:])
        guard case .checkConfig(let configuration) = command else {
            Issue.record("not --check-config")
            return
        }
        #expect(configuration.port == ProxyConfiguration.defaults.port)
        #expect(configuration.jwksURL != nil, "the example's lines were read")
    }
}
