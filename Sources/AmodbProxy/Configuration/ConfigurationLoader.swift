import AmodbModels
import AmodbRedis
import AmodbSockets
import Foundation

/// What the command line asks for.
package enum Command: Sendable {
    /// Serve with this configuration.
    case serve(ProxyConfiguration)
    /// Print the usage text.
    case help
    /// Print the version.
    case version
    /// Check that a proxy on this configuration's port answers `/healthz` (container HEALTHCHECK).
    case healthcheck(ProxyConfiguration)
    /// Print the effective configuration, secrets redacted.
    case checkConfig(ProxyConfiguration)
    /// Replay an access log through the cache and budget for several plans and TTLs
    /// (`amodb-proxy plan`); the planner reads the arguments after `plan` (`PlanOptions`).
    case plan(arguments: [String])
}

/// A configuration that cannot be used, said in one line.
package struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    /// The setting at fault, by its environment name (`AMODB_CACHE_TTL`); `nil` when the
    /// problem is no one setting's (an unknown flag, a missing key).
    package let setting: String?
    /// What is wrong, naming the setting, on one line; a secret in it is redacted.
    package let description: String

    package init(_ description: String, setting: String? = nil) {
        self.description = description
        self.setting = setting
    }
}

/// Reads settings from defaults, a `KEY=value` file (only one named by `--config` or
/// `AMODB_CONFIG`), the environment and flags, in rising precedence. Every setting has one
/// environment name and at most one flag, written once in `settings` (the tables in
/// `Settings/`), which also writes `--help`.
package enum ConfigurationLoader {
    /// The version `--version` prints.
    package static let version = "0.1.0"
    /// The settings file's usual place, relative to the working directory. It is never read
    /// unless named (`--config`/`AMODB_CONFIG`): whoever can write to the directory the
    /// proxy starts in could otherwise set `AMODB_UPSTREAM_URL` to a host of theirs, and the
    /// key would be sent there. One found there holding settings, unnamed, stops the start
    /// rather than being ignored: its settings (client tokens, limits) were meant to apply.
    package static let unnamedConfigPath = "config/amodb-proxy.conf"

    /// Parses `arguments` (without the program name) over `environment`.
    /// A bad value is quoted in the error to help; should the value be a secret (the key
    /// pasted into the wrong setting, from `AMODB_KEY` or from the key file), it is
    /// redacted first. `unnamedFile` is where a settings file nobody named is looked for,
    /// to refuse it (`unnamedConfigPath`; a test gives a file of its own).
    package static func load(
        arguments: [String], environment: [String: String], unnamedFile: String = unnamedConfigPath
    ) throws(ConfigurationError) -> Command {
        // A command of its own, with its own options: it serves nothing and reads no settings
        // (but its errors are redacted as the proxy's are).
        let isPlan = arguments.first == "plan"
        let given = gather(arguments: isPlan ? [] : arguments, environment: environment, unnamedFile: unnamedFile)
        var configuration = ProxyConfiguration()
        do {
            if isPlan { return .plan(arguments: Array(arguments.dropFirst())) }
            return try parse(given, into: &configuration)
        } catch {
            var secrets = [configuration.apiKey] + configuration.clientTokens
            secrets += [configuration.jwtSecret].compactMap { $0 }
            // Every secret given anywhere, read or not when the error struck, and every key
            // file named anywhere.
            for assignment in given.assignments {
                secrets += assignment.setting.map { secretsGiven(to: $0, in: assignment.text) } ?? []
            }
            // Too short to be a real key or token, a value would only garble the message.
            let logger = ProxyLogger(secrets: secrets.filter { $0.revealed.count >= 6 }, sink: { _ in })
            throw ConfigurationError(logger.scrubbed(error.description), setting: error.setting)
        }
    }

    /// The secrets a setting's text is or names.
    private static func secretsGiven(to setting: Setting, in text: String) -> [Secret] {
        switch setting.secrecy {
        case .none: []
        case .secret: [Secret(text)]
        case .secretList: text.split(separator: ",").map { Secret(String($0)) }
        case .secretFile:
            readFile(text).map { [Secret(String(decoding: $0, as: UTF8.self).trimmingByteOrderMark())] } ?? []
        }
    }

    /// Environment variables named like settings (`AMODB_…`) that are none, each with the
    /// setting it most likely meant, in name order: a misspelled name (`AMODB_RATELIMIT`,
    /// `AMODB_TOKENS`) would otherwise leave a default, or an open proxy, without a word.
    /// Only names: a value may be a secret.
    package static func unknownSettings(in environment: [String: String]) -> [(name: String, closest: String)] {
        let known = Set(settings.map(\.variable) + [configVariable, sandboxVariable])
        return environment.keys.filter { $0.hasPrefix("AMODB_") && !known.contains($0) }.sorted().map { name in
            (name, closestSetting(to: name, among: known.sorted()))
        }
    }

    /// The name in `names` nearest to `name`: one that holds it, or that it holds, whole
    /// (`AMODB_TOKENS` in `AMODB_PROXY_TOKENS`), else the fewest edits; the shorter on a tie.
    static func closestSetting(to name: String, among names: [String]) -> String {
        let word = Array(name.dropFirst("AMODB_".count).uppercased().utf8)
        func distance(_ other: String) -> Int {
            let candidate = Array(other.dropFirst(other.hasPrefix("AMODB_") ? "AMODB_".count : 0).utf8)
            if !word.isEmpty, candidate.count != word.count,
                String(decoding: candidate, as: UTF8.self).contains(String(decoding: word, as: UTF8.self))
                    || String(decoding: word, as: UTF8.self).contains(String(decoding: candidate, as: UTF8.self))
            {
                return 1
            }
            // Levenshtein, one row at a time.
            var previous = Array(0...candidate.count)
            for (i, a) in word.enumerated() {
                var current = [i + 1] + Array(repeating: 0, count: candidate.count)
                for (j, b) in candidate.enumerated() {
                    current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (a == b ? 0 : 1))
                }
                previous = current
            }
            return previous[candidate.count]
        }
        return names.min { (distance($0), $0.count, $0) < (distance($1), $1.count, $1) } ?? "AMODB_KEY"
    }

    /// What the command line asks for besides settings.
    private enum Mode {
        case serve, healthcheck, checkConfig
    }

    /// The settings as given, before any value is read.
    private struct Given {
        /// One setting's text from one source; `setting` is `nil` for a name no setting has.
        struct Assignment {
            let variable: String
            let setting: Setting?
            let text: String
        }

        /// In rising precedence: the file's, then the environment's, then the flags'.
        var assignments: [Assignment] = []
        var mode = Mode.serve
        var sandbox = false
        /// Where state directories go when `AMODB_STATE_DIR` is not given (XDG's state home).
        var stateHome: String?
        /// `--help` or `--version`, asked for before anything went wrong.
        var command: Command?
        /// The first thing wrong with the arguments or the file. Reading goes on after it, so
        /// that a key file named later is still known to redact.
        var error: ConfigurationError?

        mutating func record(_ error: ConfigurationError) {
            if self.error == nil { self.error = error }
        }
    }

    /// Reads the arguments (through the one `ArgumentReader`), the settings file and the
    /// environment into assignments, without reading any value.
    private static func gather(arguments: [String], environment: [String: String], unnamedFile: String) -> Given {
        var given = Given()
        given.stateHome =
            environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? environment["HOME"].flatMap { $0.hasPrefix("/") ? $0 + "/.local/state" : nil }
        var flags: [Given.Assignment] = []
        var configPath = environment[configVariable]
        given.sandbox = environment[sandboxVariable].map { $0 == "1" || $0.lowercased() == "true" } ?? false
        var reader = ArgumentReader(arguments)
        reading: while let name = reader.next() {
            do throws(ConfigurationError) {
                switch name {
                case "-h", "--help", "--version":
                    guard given.error == nil else { continue }
                    given.command = name == "--version" ? .version : .help
                    break reading
                case "--healthcheck": given.mode = .healthcheck
                case "--check-config": given.mode = .checkConfig
                case sandboxFlag: given.sandbox = true
                case configFlag: configPath = try reader.value()
                default:
                    guard let setting = settings.first(where: { !$0.flag.isEmpty && $0.flag == name }) else {
                        throw ConfigurationError("unknown option \(shown(reader.argument)); see --help")
                    }
                    flags.append(.init(variable: setting.variable, setting: setting, text: try reader.value()))
                }
            } catch {
                given.record(error)
            }
        }

        if let path = configPath {
            if let data = readFile(path) {
                do {
                    for (variable, text) in try parseFile(
                        String(decoding: data, as: UTF8.self).trimmingByteOrderMark(), path: path)
                    {
                        given.assignments.append(
                            .init(variable: variable, setting: settings.first { $0.variable == variable }, text: text))
                    }
                } catch {
                    given.record(error)
                }
            } else {
                given.record(
                    ConfigurationError("cannot read the configuration file \(shown(path))", setting: configVariable))
            }
        } else if let refusal = refusalOfUnnamedFile(at: unnamedFile) {
            given.record(refusal)
        }
        for setting in settings {
            if let text = environment[setting.variable] {
                given.assignments.append(.init(variable: setting.variable, setting: setting, text: text))
            }
        }
        given.assignments += flags
        return given
    }

    /// Why the start stops when no file is named but the one at `path` holds settings
    /// (`nil`: there is no such file, or it holds only comments, as the example does). Its
    /// values are never applied, and never shown: only the names of the settings it sets.
    private static func refusalOfUnnamedFile(at path: String) -> ConfigurationError? {
        guard let data = readFile(path) else { return nil }
        let text = String(decoding: data, as: UTF8.self).trimmingByteOrderMark()
        let names: [String]
        do {
            names = try parseFile(text, path: path).map(\.0)
        } catch {
            names = ["a line that is no NAME=value"]
        }
        guard !names.isEmpty else { return nil }
        let known = settings.map(\.variable).filter(names.contains)
        let upstream = "AMODB_UPSTREAM_URL"
        let what = known.isEmpty ? "holds settings" : "sets " + known.joined(separator: ", ")
        let why =
            known.contains(upstream)
            ? "a file nobody named must not choose where the amodb key is sent"
            : "its settings would otherwise be ignored without a word"
        return ConfigurationError(
            "\(shown(path)) in the working directory \(what), but a settings file is read only when named (\(why)): if it is yours, name it with \(configFlag) \(shown(path)) or \(configVariable)=\(shown(path)); if not, remove it",
            setting: known.contains(upstream) ? upstream : configVariable)
    }

    private static func parse(_ given: Given, into configuration: inout ProxyConfiguration) throws(ConfigurationError)
        -> Command
    {
        if let command = given.command { return command }
        if let error = given.error { throw error }
        configuration.sandbox = given.sandbox
        // The settings given a value anywhere (the file, the environment, a flag).
        var named = Set<String>()
        for assignment in given.assignments {
            guard let setting = assignment.setting else {
                throw ConfigurationError("unknown setting \(shown(assignment.variable)) in the configuration file")
            }
            try apply(setting, assignment.text, to: &configuration)
            if !assignment.text.isEmpty { named.insert(setting.variable) }
        }
        // Not given at all (an empty value is given: memory only): one directory per port,
        // so two proxies on one machine never share a ledger and a restart on the same port
        // finds its own. An ephemeral port (0) is never the same twice: no default then.
        if !given.assignments.contains(where: { $0.variable == "AMODB_STATE_DIR" }), configuration.port != 0,
            let home = given.stateHome
        {
            configuration.stateDirectory = home + "/amodb-proxy/port-\(configuration.port)"
            configuration.stateDirectoryIsDefault = true
        }
        try applyRedisTLS(to: &configuration)
        try applyRedisSentinels(to: &configuration)
        try applyRedisCluster(to: &configuration)
        try checkRules(configuration, named: named)
        switch given.mode {
        case .healthcheck: return .healthcheck(configuration)
        case .checkConfig: return .checkConfig(configuration)
        case .serve:
            if configuration.apiKey.isEmpty && !configuration.sandbox {
                throw ConfigurationError(
                    "no amodb API key: set AMODB_KEY (or AMODB_KEY_FILE), or try the proxy offline with --sandbox",
                    setting: "AMODB_KEY")
            }
            return .serve(configuration)
        }
    }

    /// The rules between settings, once each has been read; `named` holds the settings given a value.
    private static func checkRules(_ configuration: ProxyConfiguration, named: Set<String>) throws(ConfigurationError) {
        var named = named
        // Rules for users' tokens with nothing to check them with would do nothing, silently:
        // the operator meant to require sign-in. The leeway at its default is no rule
        // (`--check-config` prints it, and its output is a settings file).
        if configuration.jwtLeeway == ProxyConfiguration.defaults.jwtLeeway { named.remove("AMODB_JWT_LEEWAY") }
        if !configuration.verifiesUserTokens,
            let rule = ["AMODB_JWT_ISSUER", "AMODB_JWT_AUDIENCE", "AMODB_JWT_LEEWAY"].first(where: named.contains)
        {
            throw ConfigurationError(
                "\(rule) is set, but neither AMODB_JWT_JWKS_URL nor AMODB_JWT_SECRET (or AMODB_JWT_SECRET_FILE) is: set the sign-in provider's key set URL (RS256, ES256) or its HS256 secret, or remove \(rule)",
                setting: "AMODB_JWT_JWKS_URL")
        }
        _ = try configuration.validated()
    }

    /// Gives `rediss://` its files and checks them now (libssl loads, each file loads, the
    /// key matches its certificate), so that a bad path stops the proxy at start rather
    /// than becoming an outage; files with a plain `redis://` URL are a mistake, refused.
    private static func applyRedisTLS(to configuration: inout ProxyConfiguration) throws(ConfigurationError) {
        let files = configuration.redisParts.tls
        guard files != RedisTLSFiles() else { return }
        // The first of the files given, to name when none can be used (plain `redis://`).
        let setting =
            files.caFile != nil
            ? "AMODB_REDIS_CA_FILE" : files.certificateFile != nil ? "AMODB_REDIS_CERT_FILE" : "AMODB_REDIS_KEY_FILE"
        guard var redis = configuration.redis, redis.endpoint.usesTLS else {
            throw ConfigurationError(
                "\(setting) is set, but AMODB_REDIS_URL is not a rediss:// URL: TLS files need rediss://",
                setting: setting)
        }
        redis.tls = files
        do throws(RedisTLSError) {
            try redis.checkTLS()
        } catch {
            // The setting of the file at fault: a key that does not match its certificate is
            // the key's, whichever other files are set.
            let named =
                switch error.file {
                case .authority: "AMODB_REDIS_CA_FILE"
                case .certificate: "AMODB_REDIS_CERT_FILE"
                case .key: "AMODB_REDIS_KEY_FILE"
                case nil: setting
                }
            throw ConfigurationError("\(named): \(error.reason)", setting: named)
        }
        configuration.redis = redis
    }

    /// Puts Redis Sentinel in the Redis configuration: both the sentinels and the master's
    /// name, or neither. `AMODB_REDIS_URL` is then optional: its credentials, database and
    /// scheme are used, its host and port are replaced by the master's the sentinels name.
    private static func applyRedisSentinels(to configuration: inout ProxyConfiguration) throws(ConfigurationError) {
        let list = configuration.redisParts.sentinelList
        let master = configuration.redisParts.master
        guard !list.isEmpty || !master.isEmpty else { return }
        guard !list.isEmpty, !master.isEmpty else {
            let missing = list.isEmpty ? "AMODB_REDIS_SENTINELS" : "AMODB_REDIS_MASTER"
            throw ConfigurationError(
                "\(missing) is required with \(list.isEmpty ? "AMODB_REDIS_MASTER" : "AMODB_REDIS_SENTINELS"): Sentinel needs the sentinels and the master's name",
                setting: missing)
        }
        var redis = configuration.redis ?? RedisConfiguration(endpoint: RedisEndpoint(host: master))
        do throws(RedisURLError) {
            redis.sentinels = try RedisSentinels(
                list: list, masterName: master, password: configuration.redisParts.sentinelPassword)
        } catch {
            throw ConfigurationError("AMODB_REDIS_SENTINELS: \(error.reason)", setting: "AMODB_REDIS_SENTINELS")
        }
        configuration.redis = redis
    }

    /// Puts cluster mode in the Redis configuration, its hash tag the key prefix: a URL to
    /// learn the cluster from is needed, and a prefix without braces (it becomes the tag);
    /// `validated()` checks the rest.
    private static func applyRedisCluster(to configuration: inout ProxyConfiguration) throws(ConfigurationError) {
        guard configuration.redisParts.cluster else { return }
        let setting = "AMODB_REDIS_CLUSTER"
        guard var redis = configuration.redis else {
            throw ConfigurationError(
                "\(setting) is on, but AMODB_REDIS_URL is not set: name one node of the cluster, or the service's configuration endpoint",
                setting: "AMODB_REDIS_URL")
        }
        guard let mode = RedisClusterMode(hashTag: configuration.redisPrefix) else {
            throw ConfigurationError(
                "AMODB_REDIS_PREFIX \(shown(configuration.redisPrefix)) holds a brace, but with \(setting) on every key carries the prefix in braces as its one hash tag: remove { and } from it",
                setting: "AMODB_REDIS_PREFIX")
        }
        redis.cluster = mode
        configuration.redis = redis
    }

    /// Applies one setting; whatever its parser throws names that setting.
    private static func apply(_ setting: Setting, _ value: String, to configuration: inout ProxyConfiguration)
        throws(ConfigurationError)
    {
        do {
            try setting.apply(&configuration, value)
        } catch {
            throw ConfigurationError(error.description, setting: error.setting ?? setting.variable)
        }
    }

    /// The amodb key from a setting or a file: without a byte order mark and surrounding
    /// white space; refused with a control character inside (a CR, LF or NUL would make
    /// the `Authorization` field unsendable, and the proxy would call amodb without one).
    /// The error never shows the key.
    static func apiKey(_ text: String, _ name: String) throws(ConfigurationError) -> Secret {
        let key = text.trimmingByteOrderMark().trimmingSpacesAndNewlines()
        if let bad = key.unicodeScalars.first(where: { $0.properties.generalCategory == .control }) {
            let what =
                switch bad.value {
                case 0x0D: "a carriage return (CR)"
                case 0x0A: "a line feed (LF)"
                case 0x00: "a NUL byte"
                default: "a control character (U+\(String(bad.value, radix: 16, uppercase: true)))"
                }
            throw ConfigurationError(
                "\(name) holds a key with \(what) inside it; a key is one line of printable characters (the key is not shown)"
            )
        }
        return Secret(String(key))
    }

    /// The HS256 secret of users' ID tokens, as `apiKey` reads a key, and at least 32 bytes
    /// (RFC 7518 §3.2: a key as long as the hash). The error never shows the secret.
    static func jwtSecret(_ text: String, _ name: String) throws(ConfigurationError) -> Secret? {
        let secret = try apiKey(text, name)
        if secret.isEmpty { return nil }
        guard secret.revealed.utf8.count >= 32 else {
            throw ConfigurationError(
                "\(name) holds a secret of \(secret.revealed.utf8.count) bytes; an HS256 secret needs at least 32 (the secret is not shown)"
            )
        }
        return secret
    }

    /// Whether a URL's authority (between `//` and the path) holds a user name or password.
    static func hasCredentials(_ url: String) -> Bool {
        guard let start = url.range(of: "//") else { return url.contains("@") }
        let authority = url[start.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        return authority.contains("@")
    }

    /// A whole file's bytes, or `nil` if it cannot be read (also works for `/dev/null` and pipes).
    static func readFile(_ path: String) -> Data? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        return try? handle.readToEnd() ?? Data()
    }

    /// `NAME=value` lines; `#` starts a comment line; quotes around the value are dropped.
    static func parseFile(_ text: String, path: String) throws(ConfigurationError) -> [(String, String)] {
        var pairs: [(String, String)] = []
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingSpacesAndNewlines()
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let equals = line.firstIndex(of: "=") else {
                throw ConfigurationError("\(shown(path)):\(number + 1): expected NAME=value", setting: configVariable)
            }
            let name = String(line[..<equals].trimmingSpacesAndNewlines())
            var value = line[line.index(after: equals)...].trimmingSpacesAndNewlines()
            if value.count >= 2, let first = value.first, first == "\"" || first == "'", value.last == first {
                value = value.dropFirst().dropLast()
            }
            pairs.append((name, String(value)))
        }
        return pairs
    }

    /// A value as quoted in an error: on one line (control characters escaped) and at most
    /// 80 characters, so a bad value cannot garble or flood the message.
    package static func shown(_ value: String) -> String {
        var text = ""
        for scalar in value.unicodeScalars.prefix(80) {
            text += scalar.properties.generalCategory == .control ? scalar.escaped(asASCII: true) : String(scalar)
        }
        return value.unicodeScalars.count > 80 ? text + "…" : text
    }

    /// The effective configuration as `NAME=value` lines (a valid settings file), with
    /// every secret redacted: what `--check-config` prints.
    package static func describe(_ configuration: ProxyConfiguration) -> String {
        var text = "# amodb-proxy \(version): effective configuration (secrets redacted)\n"
        if configuration.sandbox {
            text += "# sandbox mode: the built-in amodb stand-in replaces AMODB_UPSTREAM_URL and AMODB_KEY\n"
        }
        for setting in settings {
            let value = setting.show(configuration)
            text += value.isEmpty ? "# \(setting.variable) is not set\n" : "\(setting.variable)=\(value)\n"
        }
        return text
    }

}
