package import AmodbProxy

/// What the arguments after `amodb-proxy plan` ask for.
package enum PlanCommand: Sendable, Equatable {
    /// Replay with these options.
    case replay(PlanOptions)
    /// Print the usage text.
    case help
}

/// What `amodb-proxy plan` replays, and against which plans and movie TTLs.
package struct PlanOptions: Sendable, Equatable {
    /// The access log to read; `-`: standard input.
    package var accessLog: String
    /// The plans compared, in calls a minute.
    package var plans = [20, 40, 120]
    /// The movie-details TTLs compared, in seconds.
    package var movieTTLs: [Double] = [1800, 21_600, 86_400]
    /// Seconds a miss waits for a call when the window is spent, before its 503.
    package var missWait = 2.0
    /// Seconds a trending list is fresh: the proxy's default `AMODB_CACHE_TTL`.
    package var trendingTTL = ProxyConfiguration.defaults.cacheTTL
    /// Seconds `/configuration` is fresh.
    package var configurationTTL = 86_400.0
    /// Where to write the report as one self-contained HTML page too (`--html FILE`); `nil`: not.
    package var htmlPath: String?

    /// The defaults, replaying `accessLog`.
    package init(accessLog: String) {
        self.accessLog = accessLog
    }

    /// Most plans, and most TTLs, one run compares (the table stays readable).
    static let maxChoices = 12

    /// What the arguments after `plan` ask for: a replay, or the help (whose `plan` lines
    /// are `ConfigurationLoader.planUsage`). Errors are one line starting `plan:`.
    package static func command(arguments: [String]) throws(ConfigurationError) -> PlanCommand {
        var accessLog: String?
        var options = PlanOptions(accessLog: "")
        var reader = ArgumentReader(arguments, context: "plan: ")
        while let name = reader.next() {
            switch name {
            case "-h", "--help": return .help
            case "--access-log":
                let path = try reader.value()
                guard !path.isEmpty else {
                    throw ConfigurationError("plan: --access-log needs a file name, or - for standard input")
                }
                accessLog = path
            case "--plans":
                let text = try reader.value()
                guard let plans = list(text, { Int($0).flatMap { (1...100_000).contains($0) ? $0 : nil } }) else {
                    throw ConfigurationError(
                        "plan: --plans must list at most 12 plans in calls a minute from 1 to 100000, such as 20,40,120, not \(ConfigurationLoader.shown(text))"
                    )
                }
                options.plans = plans
            case "--movie-ttls":
                let text = try reader.value()
                guard
                    let ttls = list(
                        text, { Double($0).flatMap { $0.isFinite && $0 >= 1 && $0 <= 31_536_000 ? $0 : nil } })
                else {
                    throw ConfigurationError(
                        "plan: --movie-ttls must list at most 12 TTLs in seconds from 1 to 31536000, such as 1800,21600,86400, not \(ConfigurationLoader.shown(text))"
                    )
                }
                options.movieTTLs = ttls
            case "--html":
                let path = try reader.value()
                guard !path.isEmpty else {
                    throw ConfigurationError("plan: --html needs a file name to write the page to")
                }
                options.htmlPath = path
            case "--miss-wait":
                let text = try reader.value()
                guard let seconds = Double(text.trimmingSpacesAndNewlines()), seconds.isFinite,
                    (0...60).contains(seconds)
                else {
                    throw ConfigurationError(
                        "plan: --miss-wait must be a number of seconds from 0 to 60, not \(ConfigurationLoader.shown(text))"
                    )
                }
                options.missWait = seconds
            default:
                throw ConfigurationError(
                    "plan: unknown option \(ConfigurationLoader.shown(reader.argument)); see --help")
            }
        }
        guard let accessLog else {
            throw ConfigurationError("plan needs --access-log FILE: the proxy's access log (- reads standard input)")
        }
        options.accessLog = accessLog
        return .replay(options)
    }

    /// The comma-separated values of `text`, duplicates dropped (first kept), or `nil` if any
    /// does not read, there are none, or more than `maxChoices`.
    private static func list<Value: Equatable>(_ text: String, _ read: (String) -> Value?) -> [Value]? {
        var values: [Value] = []
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard let value = read(String(item.trimmingSpacesAndNewlines())) else { return nil }
            if !values.contains(value) { values.append(value) }
        }
        return values.isEmpty || values.count > maxChoices ? nil : values
    }
}
