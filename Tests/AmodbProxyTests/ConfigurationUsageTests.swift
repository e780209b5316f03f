import Testing

@testable import AmodbProxy

/// `--help` as a reader sees it: 80 columns, each setting's flag, value placeholder and
/// environment variable apart on its row, its help and default whole below it.
struct ConfigurationUsageTests {
    private let lines = ConfigurationLoader.usage.split(separator: "\n", omittingEmptySubsequences: false).map(
        String.init)

    private func words(_ line: String) -> [String] {
        line.split(whereSeparator: \.isWhitespace).map(String.init)
    }

    /// The words a setting's row holds: flag and placeholder (or that it has no flag), variable.
    private func rowWords(_ setting: ConfigurationLoader.Setting) -> [String] {
        (setting.flag.isEmpty ? ["(environment", "only)"] : [setting.flag, ConfigurationLoader.valuePlaceholder]) + [
            setting.variable
        ]
    }

    private func withoutSpaces(_ text: String) -> String {
        String(text.filter { !$0.isWhitespace })
    }

    @Test func everyLineFitsEightyColumns() {
        for line in lines {
            #expect(line.count <= 80, "\(line.count) columns: \(line)")
            #expect(line.last != " ", "trailing space: \(line)")
        }
    }

    @Test func eachSettingsFlagPlaceholderAndVariableStandApartOnItsRow() {
        for setting in ConfigurationLoader.settings {
            let row = rowWords(setting)
            #expect(lines.filter { words($0) == row }.count == 1, "no row \(row.joined(separator: " ")) in --help")
        }
    }

    @Test func theVariablesStandInOneColumnApartFromTheFlags() throws {
        var columns: Set<Int> = []
        for setting in ConfigurationLoader.settings {
            let row = try #require(lines.first { words($0) == rowWords(setting) })
            #expect(row.hasSuffix(setting.variable))
            let column = row.count - setting.variable.count
            #expect(row.dropLast(setting.variable.count).hasSuffix("  "), "two spaces before \(setting.variable)")
            columns.insert(column)
        }
        #expect(columns.count == 1, "variables start in columns \(columns.sorted())")
    }

    @Test func eachSettingsHelpAndDefaultFollowItsRowWhole() throws {
        let defaults = ProxyConfiguration()
        for setting in ConfigurationLoader.settings {
            #expect(!setting.help.contains("["), "\(setting.variable)'s help restates a default")
            let row = try #require(lines.firstIndex { words($0) == rowWords(setting) })
            let helpLines = lines[(row + 1)...].prefix { $0.hasPrefix("      ") }
            #expect(!helpLines.isEmpty, "no help below \(setting.variable)")
            // The default as the configuration holds it; a line break may fall inside a long one.
            let value = setting.show(defaults)
            let expected = setting.help + (value.isEmpty ? "" : " [\(value)]")
            #expect(withoutSpaces(helpLines.joined()) == withoutSpaces(expected), "\(setting.variable)")
            #expect(
                helpLines.joined(separator: " ").split(separator: " ").joined(separator: " ").contains(setting.help))
        }
    }

    @Test func theCommandOptionsAreListedWithTheirHelp() {
        for option in ConfigurationLoader.commandOptions {
            #expect(lines.contains { $0.hasPrefix("  " + option.label + "  ") }, "\(option.label)")
        }
        #expect(
            lines.contains {
                words($0).starts(with: ["--config", "PATH", "settings", "file", "of", "NAME=value", "lines"])
            })
    }

    @Test(arguments: [
        // A sentence: broken between words only.
        "seconds an idle keep-alive connection stays open before the proxy closes it, unless a request arrives first",
        // A default list longer than a line: broken after its commas.
        "amodb's translated languages [" + Array(repeating: "en-US,de-DE,fr-FR,es-ES", count: 6).joined(separator: ",")
            + "]",
        // A word longer than a line without a comma: broken where the line ends.
        "file " + String(repeating: "x", count: 170) + " holds it",
    ])
    func wrappingKeepsEveryCharacterWithinTheWidth(text: String) {
        let wrapped = ConfigurationLoader.wrap(text, indent: 6)
        #expect(wrapped.count > 1)
        for line in wrapped {
            #expect(line.count <= ConfigurationLoader.usageWidth, "\(line)")
            #expect(line.hasPrefix("      ") && !line.dropFirst(6).hasPrefix(" "), "indented by six: \(line)")
            #expect(!line.hasSuffix(" ") && line.count > 6)
        }
        #expect(withoutSpaces(wrapped.joined()) == withoutSpaces(text))
    }

    @Test func aFirstLineLabelGetsTheTextBesideItAndContinuationsLineUpUnderIt() {
        let wrapped = ConfigurationLoader.wrap(
            "print the effective configuration (secrets redacted) and exit, then some more words to wrap",
            first: "  --check-config  ", indent: 18)
        #expect(wrapped.count == 2)
        #expect(wrapped[0].hasPrefix("  --check-config  print the effective"))
        #expect(wrapped[1].hasPrefix(String(repeating: " ", count: 18)) && wrapped[1].dropFirst(18).first != " ")
    }
}
