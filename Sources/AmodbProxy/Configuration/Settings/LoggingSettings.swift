extension ConfigurationLoader {
    /// What the proxy writes about itself and its requests.
    static let loggingSettings: [Setting] = [
        Setting(
            "AMODB_ACCESS_LOG", flag: "--access-log", \.accessLog, .onOff,
            help: "one line per request on stdout: on or off",
            accepts: "`on`/`off` (`true`, `1`, `yes` / `false`, `0`, `no`)",
            doc: "one line per request on standard output"),
        Setting(
            "AMODB_LOG_FORMAT", flag: "--log-format", \.logFormat, .logFormat, help: "json or text",
            accepts: "`json`, `text`", doc: "the format of both logs"),
        Setting(
            "AMODB_LOG_LEVEL", flag: "--log-level", \.logLevel, .logLevel, help: "debug, info, warning or error",
            accepts: "`debug`, `info`, `warning`, `error`", doc: "the event log's level (reloaded on `SIGHUP`)"),
    ]
}

extension SettingValue where Value == LogFormat {
    /// `json` or `text`, in any case.
    fileprivate static let logFormat = SettingValue(
        read: { value, name throws(ConfigurationError) in
            guard let format = LogFormat(rawValue: value.lowercased()) else {
                throw ConfigurationError("\(name) must be json or text, not \(ConfigurationLoader.shown(value))")
            }
            return format
        }, show: \.rawValue)
}

extension SettingValue where Value == ProxyLogger.Level {
    /// A level by its name.
    fileprivate static let logLevel = SettingValue(
        read: { value, name throws(ConfigurationError) in
            guard let level = ProxyLogger.Level(name: value) else {
                throw ConfigurationError(
                    "\(name) must be debug, info, warning or error, not \(ConfigurationLoader.shown(value))")
            }
            return level
        }, show: \.name)
}
