extension ConfigurationLoader {
    /// The columns `--help` is laid out in: an 80-column terminal shows every line whole.
    static let usageWidth = 80

    /// What `--help` writes after a setting's flag for its value (the help says its unit).
    static let valuePlaceholder = "VALUE"

    /// The options that are not settings, with their `--help` descriptions.
    static let commandOptions: [(label: String, help: String)] = [
        (sandboxFlag, "run against the built-in amodb stand-in (no key, no network)"),
        (configFlag + " PATH", "settings file of NAME=value lines (none is read unless named)"),
        ("--healthcheck", "exit 0 if the proxy on HOST/PORT answers /healthz (for containers)"),
        ("--check-config", "print the effective configuration (secrets redacted) and exit"),
        ("--version", "print the version"),
        ("-h, --help", "print this help"),
    ]

    /// The usage lines of `amodb-proxy plan`, whose options the planner reads (`PlanOptions`).
    package static let planUsage = """
          amodb-proxy plan --access-log FILE [--plans 20,40,120]
                           [--movie-ttls 1800,21600,86400] [--miss-wait 2]
                           [--html REPORT.html]
                                replay an access log (FILE; - for standard input)
                                through the cache and budget for each plan (calls a
                                minute) and movie TTL (seconds): the shares of answers
                                fresh, stale, filled and refused; no network; --html
                                also writes them as a page (bars, refusals a minute)

        """

    /// The `--help` text, written from `commandOptions` and the settings table.
    ///
    /// Column widths are measured from the rows, so a setting added to the table lines up
    /// without touching this. Each setting is a row of its flag and value placeholder, then
    /// its environment variable, apart by at least two spaces; its help and default follow,
    /// indented, on lines of their own.
    package static var usage: String {
        var lines = wrap("amodb-proxy \(version): holds the amodb API key and shares one cached answer per path.")
        lines += ["", "Usage: amodb-proxy [options]", ""]
        let optionWidth = commandOptions.map(\.label.count).max() ?? 0
        for option in commandOptions {
            lines += wrap(
                option.help, first: "  " + padded(option.label, to: optionWidth) + "  ", indent: optionWidth + 4)
        }
        lines.append("")
        lines += planUsage.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines += wrap(
            "Settings: a flag and an environment variable each, then what it sets and its default in brackets. Flags win over the environment, which wins over the file."
        )
        lines.append("")
        let defaults = ProxyConfiguration.defaults
        let labels = settings.map { $0.flag.isEmpty ? "(environment only)" : $0.flag + " " + valuePlaceholder }
        let labelWidth = labels.map(\.count).max() ?? 0
        for (setting, label) in zip(settings, labels) {
            lines.append("  " + padded(label, to: labelWidth) + "  " + setting.variable)
            // The default as the configuration holds it, never restated in the help.
            let value = setting.show(defaults)
            lines += wrap(setting.help + (value.isEmpty ? "" : " [\(value)]"), indent: 6)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func padded(_ text: String, to width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - text.count))
    }

    /// `text` on lines of at most `usageWidth` characters: the first starts with `first`
    /// (`indent` spaces when `nil`), the others with `indent` spaces. Words move to the next
    /// line whole; one longer than a line (a default list such as the languages) is broken
    /// after a comma where it has one, else where the line ends.
    static func wrap(_ text: String, first: String? = nil, indent: Int = 0) -> [String] {
        let margin = String(repeating: " ", count: indent)
        precondition(indent < usageWidth && (first?.count ?? 0) < usageWidth, "no room for text in --help")
        var lines: [String] = []
        var line = first ?? margin
        var lineHasWords = false
        for word in text.split(separator: " ") {
            if lineHasWords {
                if line.count + 1 + word.count <= usageWidth {
                    line += " " + word
                    continue
                }
                lines.append(line)
                line = margin
            }
            var rest = word
            while line.count + rest.count > usageWidth {
                let room = rest.prefix(usageWidth - line.count)
                let cut = room.lastIndex(of: ",").map { rest.index(after: $0) } ?? room.endIndex
                lines.append(line + rest[..<cut])
                line = margin
                rest = rest[cut...]
            }
            line += rest
            // A word broken at its last comma leaves a fresh line, with no word yet.
            lineHasWords = !rest.isEmpty
        }
        if lineHasWords || lines.isEmpty { lines.append(line) }
        return lines
    }
}
