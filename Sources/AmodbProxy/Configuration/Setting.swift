extension ConfigurationLoader {
    /// One setting: its names, what `--help` and the docs say of it, and how its value is read
    /// and shown. Each is written once, in one of the tables in `Settings/`; the loader, the
    /// redaction of errors, `--help`, `--check-config`, the unknown-name warning and the docs
    /// table in `docs/configuration.md` all read it from there.
    struct Setting: Sendable {
        /// Its name in the environment and in a settings file (`AMODB_CACHE_TTL`).
        let variable: String
        /// Its flag (`--cache-ttl`); empty when it has none (a secret on the command line would
        /// show in `ps`).
        let flag: String
        /// What it sets, for `--help`; the default follows it there, from `ProxyConfiguration`.
        let help: String
        /// The values it accepts, as the docs table says them (Markdown).
        let accepts: String
        /// What it sets, as the docs table says it (Markdown, links allowed).
        let doc: String
        /// The value `config/amodb-proxy.conf` shows in place of the default (a path, a URL),
        /// or `nil` when it shows the default.
        let example: String?
        /// Whether its value is, names or holds a secret, so an error can redact it.
        let secrecy: Secrecy
        /// The setting's value in a configuration, as `--check-config` prints it (secrets redacted).
        let show: @Sendable (ProxyConfiguration) -> String
        /// Reads a value into a configuration; errors name the setting by `variable`.
        let apply: @Sendable (inout ProxyConfiguration, String) throws(ConfigurationError) -> Void

        /// A setting that stores what `value` reads at `path`.
        init<Value>(
            _ variable: String, flag: String, _ path: any WritableKeyPath<ProxyConfiguration, Value> & Sendable,
            _ value: SettingValue<Value>, help: String, accepts: String, doc: String, example: String? = nil
        ) {
            self.variable = variable
            self.flag = flag
            self.help = help
            self.accepts = accepts
            self.doc = doc
            self.example = example
            self.secrecy = value.secrecy
            self.show = { configuration in value.show(configuration[keyPath: path]) }
            self.apply = { configuration, text throws(ConfigurationError) in
                configuration[keyPath: path] = try value.read(text, variable)
            }
        }
    }

    /// What a setting's text is to an error message that might quote it elsewhere.
    enum Secrecy: Sendable {
        /// Nothing secret.
        case none
        /// The text is a secret (`AMODB_KEY`).
        case secret
        /// The text is a comma-separated list of secrets (`AMODB_PROXY_TOKENS`).
        case secretList
        /// The text names a file that holds a secret (`AMODB_KEY_FILE`).
        case secretFile
    }

    /// Every setting, in the order `--help`, `--check-config` and the docs table list them.
    /// A new setting goes into the table of its concern, in `Settings/`.
    static let settings: [Setting] =
        upstreamAccountSettings + listeningSettings + cacheLifetimeSettings + budgetSettings
        + cacheStorageSettings + upstreamCallSettings + shutdownSettings + userSettings + proofSettings
        + fleetSettings
        + clientLimitSettings + accessSettings + loggingSettings + connectionSettings

    /// The variable and the flag naming the settings file: read before the settings, and no
    /// setting themselves.
    static let (configVariable, configFlag) = ("AMODB_CONFIG", "--config")
    /// The variable and the flag asking for the built-in stand-in, read as the settings file's are.
    static let (sandboxVariable, sandboxFlag) = ("AMODB_SANDBOX", "--sandbox")
}
