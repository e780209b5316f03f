import AmodbModels
import Foundation

/// What the command line asks for.
public enum Command: Sendable {
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
}

/// A configuration that cannot be used, said in one line.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}

/// Reads settings from defaults, a `KEY=value` file, the environment and flags, in
/// rising precedence. Every setting has one environment name and one flag, listed in
/// `settings`, which also writes `--help`.
public enum ConfigurationLoader {
    /// The version `--version` prints.
    public static let version = "0.1.0"
    /// Read when present and no `--config`/`AMODB_CONFIG` names another file.
    public static let defaultConfigPath = "config/amodb-proxy.conf"

    struct Setting: Sendable {
        let variable: String
        let flag: String
        let help: String
        /// The setting's value in a configuration, as `--check-config` prints it (secrets redacted).
        let show: @Sendable (ProxyConfiguration) -> String
        let apply: @Sendable (inout ProxyConfiguration, String) throws(ConfigurationError) -> Void
    }

    static let settings: [Setting] = [
        Setting(variable: "AMODB_KEY", flag: "", help: "amodb API key (prefer AMODB_KEY_FILE in containers)", show: { config in config.apiKey.isEmpty ? "" : "<redacted>" }) { config, value in
            config.apiKey = Secret(value)
        },
        Setting(variable: "AMODB_KEY_FILE", flag: "--key-file", help: "file holding the amodb API key", show: { config in "" }) { config, value throws(ConfigurationError) in
            guard let data = readFile(value) else {
                throw ConfigurationError("cannot read AMODB_KEY_FILE \(value)")
            }
            config.apiKey = Secret(String(decoding: data, as: UTF8.self))
        },
        Setting(variable: "AMODB_UPSTREAM_URL", flag: "--upstream-url", help: "amodb API root [https://api.amodb.dev/3]", show: { config in config.upstreamURL }) { config, value throws(ConfigurationError) in
            guard let url = URL(string: value), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
                  url.host != nil, url.query == nil
            else { throw ConfigurationError("AMODB_UPSTREAM_URL must be an http(s) URL such as https://api.amodb.dev/3, not \(value)") }
            config.upstreamURL = value.hasSuffix("/") ? String(value.dropLast()) : value
        },
        Setting(variable: "HOST", flag: "--host", help: "address to listen on [0.0.0.0]", show: { config in config.host }) { config, value in
            config.host = value
        },
        Setting(variable: "PORT", flag: "--port", help: "port to listen on [8080]", show: { config in String(config.port) }) { config, value throws(ConfigurationError) in
            config.port = try integer(value, "PORT", 0...65535)
        },
        Setting(variable: "AMODB_CACHE_TTL", flag: "--cache-ttl", help: "seconds a stored answer is fresh [1800]", show: { config in format(config.cacheTTL) }) { config, value throws(ConfigurationError) in
            config.cacheTTL = try seconds(value, "AMODB_CACHE_TTL", minimum: 1)
        },
        Setting(variable: "AMODB_CACHE_MAX_BYTES", flag: "--cache-max-bytes", help: "most body bytes the cache holds [67108864]", show: { config in String(config.cacheMaxBytes) }) { config, value throws(ConfigurationError) in
            config.cacheMaxBytes = try integer(value, "AMODB_CACHE_MAX_BYTES", 1024...Int.max)
        },
        Setting(variable: "AMODB_MAX_STALE", flag: "--max-stale", help: "seconds a stale answer may still be served [86400]", show: { config in format(config.maxStaleSeconds) }) { config, value throws(ConfigurationError) in
            config.maxStaleSeconds = try seconds(value, "AMODB_MAX_STALE", minimum: 0)
        },
        Setting(variable: "AMODB_NEGATIVE_TTL", flag: "--negative-ttl", help: "seconds amodb's 404 for a path is remembered [300]", show: { config in format(config.negativeTTL) }) { config, value throws(ConfigurationError) in
            config.negativeTTL = try seconds(value, "AMODB_NEGATIVE_TTL", minimum: 0)
        },
        Setting(variable: "AMODB_RATE_LIMIT", flag: "--rate-limit", help: "calls to amodb per minute at most (plan: 20, 40, 120) [40]", show: { config in String(config.rateLimit) }) { config, value throws(ConfigurationError) in
            config.rateLimit = try integer(value, "AMODB_RATE_LIMIT", 1...100_000)
        },
        Setting(variable: "AMODB_LANGUAGES", flag: "--languages", help: "amodb's translated languages; others share en-US [14 base languages]", show: { config in config.languages.joined(separator: ",") }) { config, value throws(ConfigurationError) in
            var languages: [String] = []
            for tag in value.split(separator: ",") {
                do {
                    languages.append(try AmodbRequest.normalizedLanguage(String(tag.trimmingSpacesAndNewlines())))
                } catch {
                    throw ConfigurationError("AMODB_LANGUAGES must be a comma-separated list of tags such as en-US,de-DE, not \(value)")
                }
            }
            guard !languages.isEmpty else { throw ConfigurationError("AMODB_LANGUAGES must name at least one language") }
            config.languages = languages
        },
        Setting(variable: "AMODB_CACHE_SNAPSHOT", flag: "--cache-snapshot", help: "file the cache is saved to and loaded from [off]", show: { config in config.snapshotPath ?? "" }) { config, value in
            config.snapshotPath = value.isEmpty ? nil : value
        },
        Setting(variable: "AMODB_SNAPSHOT_INTERVAL", flag: "--snapshot-interval", help: "seconds between cache snapshots [300]", show: { config in format(config.snapshotIntervalSeconds) }) { config, value throws(ConfigurationError) in
            config.snapshotIntervalSeconds = try seconds(value, "AMODB_SNAPSHOT_INTERVAL", minimum: 1)
        },
        Setting(variable: "AMODB_UPSTREAM_TIMEOUT", flag: "--upstream-timeout", help: "seconds to wait for amodb [10]", show: { config in format(config.upstreamTimeout) }) { config, value throws(ConfigurationError) in
            config.upstreamTimeout = try seconds(value, "AMODB_UPSTREAM_TIMEOUT", minimum: 0.1)
        },
        Setting(variable: "AMODB_MAX_UPSTREAM_BYTES", flag: "--max-upstream-bytes", help: "largest amodb body in bytes, after decoding [2097152]", show: { config in String(config.maxUpstreamBytes) }) { config, value throws(ConfigurationError) in
            config.maxUpstreamBytes = try integer(value, "AMODB_MAX_UPSTREAM_BYTES", 1024...1_073_741_824)
        },
        Setting(variable: "AMODB_RETRY_AFTER_MAX", flag: "--retry-after-max", help: "longest amodb Retry-After waited out, seconds [30]", show: { config in format(config.retryAfterCap) }) { config, value throws(ConfigurationError) in
            config.retryAfterCap = try seconds(value, "AMODB_RETRY_AFTER_MAX", minimum: 0)
        },
        Setting(variable: "AMODB_SHUTDOWN_GRACE", flag: "--shutdown-grace", help: "seconds in-flight requests get on SIGTERM [10]", show: { config in format(config.shutdownGraceSeconds) }) { config, value throws(ConfigurationError) in
            config.shutdownGraceSeconds = try seconds(value, "AMODB_SHUTDOWN_GRACE", minimum: 0)
        },
        Setting(variable: "AMODB_PROXY_TOKENS", flag: "", help: "client tokens (comma-separated) required as Bearer; none: open", show: { config in config.clientTokens.isEmpty ? "" : "<\(config.clientTokens.count) redacted>" }) { config, value in
            config.clientTokens = value.split(separator: ",").map { Secret(String($0)) }.filter { !$0.isEmpty }
        },
        Setting(variable: "AMODB_PROXY_TOKENS_FILE", flag: "--tokens-file", help: "file of client tokens, one per line, re-read on change", show: { config in config.clientTokensFile ?? "" }) { config, value in
            config.clientTokensFile = value.isEmpty ? nil : value
        },
        Setting(variable: "AMODB_CLIENT_RATE_LIMIT", flag: "--client-rate-limit", help: "requests a minute per client; 0: off [600]", show: { config in String(config.clientRateLimit) }) { config, value throws(ConfigurationError) in
            config.clientRateLimit = try integer(value, "AMODB_CLIENT_RATE_LIMIT", 0...10_000_000)
        },
        Setting(variable: "AMODB_CLIENT_BURST", flag: "--client-burst", help: "requests a client may make at once [120]", show: { config in String(config.clientBurst) }) { config, value throws(ConfigurationError) in
            config.clientBurst = try integer(value, "AMODB_CLIENT_BURST", 1...10_000_000)
        },
        Setting(variable: "AMODB_RATE_LIMIT_EXEMPT", flag: "--rate-limit-exempt", help: "client addresses (IPs/CIDRs) not limited per address [127.0.0.0/8,::1]", show: { config in config.rateLimitExempt.joined(separator: ",") }) { config, value throws(ConfigurationError) in
            config.rateLimitExempt = try networks(value, "AMODB_RATE_LIMIT_EXEMPT")
        },
        Setting(variable: "AMODB_TRUSTED_PROXIES", flag: "--trusted-proxies", help: "peers (IPs/CIDRs) whose X-Forwarded-For is believed", show: { config in config.trustedProxies.joined(separator: ",") }) { config, value throws(ConfigurationError) in
            config.trustedProxies = try networks(value, "AMODB_TRUSTED_PROXIES")
        },
        Setting(variable: "AMODB_CORS_ORIGINS", flag: "--cors-origins", help: "origins web apps may call from (comma-separated, or *)", show: { config in config.corsOrigins.joined(separator: ",") }) { config, value throws(ConfigurationError) in
            let origins = value.split(separator: ",").map { String($0.trimmingSpacesAndNewlines()) }.filter { !$0.isEmpty }
            for origin in origins where origin != "*" && !(origin.hasPrefix("http://") || origin.hasPrefix("https://")) || origin.hasSuffix("/") {
                throw ConfigurationError("AMODB_CORS_ORIGINS must list origins such as https://app.example.com (no path), or *, not \(origin)")
            }
            config.corsOrigins = origins
        },
        Setting(variable: "AMODB_ACCESS_LOG", flag: "--access-log", help: "one line per request on stdout: on or off [on]", show: { config in config.accessLog ? "on" : "off" }) { config, value throws(ConfigurationError) in
            switch value.lowercased() {
            case "on", "true", "1", "yes": config.accessLog = true
            case "off", "false", "0", "no": config.accessLog = false
            default: throw ConfigurationError("AMODB_ACCESS_LOG must be on or off, not \(value)")
            }
        },
        Setting(variable: "AMODB_LOG_FORMAT", flag: "--log-format", help: "json or text [json]", show: { config in config.logFormat.rawValue }) { config, value throws(ConfigurationError) in
            guard let format = LogFormat(rawValue: value.lowercased()) else {
                throw ConfigurationError("AMODB_LOG_FORMAT must be json or text, not \(value)")
            }
            config.logFormat = format
        },
        Setting(variable: "AMODB_LOG_LEVEL", flag: "--log-level", help: "debug, info, warning or error [info]", show: { config in config.logLevel.name }) { config, value throws(ConfigurationError) in
            guard let level = ProxyLogger.Level(name: value) else {
                throw ConfigurationError("AMODB_LOG_LEVEL must be debug, info, warning or error, not \(value)")
            }
            config.logLevel = level
        },
        Setting(variable: "AMODB_MAX_CONNECTIONS", flag: "--max-connections", help: "open client connections at most [10000]", show: { config in String(config.limits.maxConnections) }) { config, value throws(ConfigurationError) in
            config.limits.maxConnections = try integer(value, "AMODB_MAX_CONNECTIONS", 1...1_000_000)
        },
        Setting(variable: "AMODB_MAX_REQUEST_LINE", flag: "--max-request-line", help: "longest request line in bytes, else 414 [8192]", show: { config in String(config.limits.maxRequestLineBytes) }) { config, value throws(ConfigurationError) in
            config.limits.maxRequestLineBytes = try integer(value, "AMODB_MAX_REQUEST_LINE", 64...1_048_576)
        },
        Setting(variable: "AMODB_MAX_HEADER_BYTES", flag: "--max-header-bytes", help: "largest header block in bytes, else 431 [16384]", show: { config in String(config.limits.maxHeaderBytes) }) { config, value throws(ConfigurationError) in
            config.limits.maxHeaderBytes = try integer(value, "AMODB_MAX_HEADER_BYTES", 256...1_048_576)
        },
        Setting(variable: "AMODB_MAX_HEADER_COUNT", flag: "--max-header-count", help: "most header fields, else 431 [100]", show: { config in String(config.limits.maxHeaderCount) }) { config, value throws(ConfigurationError) in
            config.limits.maxHeaderCount = try integer(value, "AMODB_MAX_HEADER_COUNT", 1...10_000)
        },
        Setting(variable: "AMODB_MAX_BODY_BYTES", flag: "--max-body-bytes", help: "largest (discarded) GET body in bytes, else 413 [8192]", show: { config in String(config.limits.maxBodyBytes) }) { config, value throws(ConfigurationError) in
            config.limits.maxBodyBytes = try integer(value, "AMODB_MAX_BODY_BYTES", 0...1_048_576)
        },
        Setting(variable: "AMODB_READ_BUFFER_BYTES", flag: "--read-buffer-bytes", help: "unparsed input held per connection at most [32768]", show: { config in String(config.limits.maxReadBufferBytes) }) { config, value throws(ConfigurationError) in
            config.limits.maxReadBufferBytes = try integer(value, "AMODB_READ_BUFFER_BYTES", 1024...16_777_216)
        },
        Setting(variable: "AMODB_MAX_PIPELINED", flag: "--max-pipelined", help: "requests read ahead per connection [16]", show: { config in String(config.limits.maxPipelinedRequests) }) { config, value throws(ConfigurationError) in
            config.limits.maxPipelinedRequests = try integer(value, "AMODB_MAX_PIPELINED", 1...1024)
        },
        Setting(variable: "AMODB_HEAD_TIMEOUT", flag: "--head-timeout", help: "seconds for a whole request head, else 408 [10]", show: { config in format(config.timeouts.requestHeadSeconds) }) { config, value throws(ConfigurationError) in
            config.timeouts.requestHeadSeconds = try seconds(value, "AMODB_HEAD_TIMEOUT", minimum: 0.1)
        },
        Setting(variable: "AMODB_BODY_TIMEOUT", flag: "--body-timeout", help: "seconds for a whole request body after its head, else 408 [10]", show: { config in format(config.timeouts.requestBodySeconds) }) { config, value throws(ConfigurationError) in
            config.timeouts.requestBodySeconds = try seconds(value, "AMODB_BODY_TIMEOUT", minimum: 0.1)
        },
        Setting(variable: "AMODB_IDLE_TIMEOUT", flag: "--idle-timeout", help: "seconds an idle keep-alive connection stays open [60]", show: { config in format(config.timeouts.idleSeconds) }) { config, value throws(ConfigurationError) in
            config.timeouts.idleSeconds = try seconds(value, "AMODB_IDLE_TIMEOUT", minimum: 0.1)
        },
        Setting(variable: "AMODB_WRITE_TIMEOUT", flag: "--write-timeout", help: "seconds a client may stall our response [30]", show: { config in format(config.timeouts.writeSeconds) }) { config, value throws(ConfigurationError) in
            config.timeouts.writeSeconds = try seconds(value, "AMODB_WRITE_TIMEOUT", minimum: 0.1)
        },
    ]

    /// Parses `arguments` (without the program name) over `environment`.
    /// A bad value is quoted in the error to help; should the value be a secret (the key
    /// pasted into the wrong setting), it is redacted first.
    public static func load(arguments: [String], environment: [String: String]) throws(ConfigurationError) -> Command {
        do {
            return try parse(arguments: arguments, environment: environment)
        } catch {
            let secrets = [environment["AMODB_KEY"]] + (environment["AMODB_PROXY_TOKENS"]?.split(separator: ",").map(String.init) ?? [])
            // Too short to be a real key or token, a value would only garble the message.
            let logger = ProxyLogger(secrets: secrets.compactMap { $0 }.filter { $0.count >= 6 }.map(Secret.init), sink: { _ in })
            throw ConfigurationError(logger.scrubbed(error.description))
        }
    }

    private static func parse(arguments: [String], environment: [String: String]) throws(ConfigurationError) -> Command {
        var flags: [(Setting, String)] = []
        var configPath = environment["AMODB_CONFIG"]
        var sandbox = environment["AMODB_SANDBOX"].map { $0 == "1" || $0.lowercased() == "true" } ?? false
        var mode = "serve"
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            var (name, inlineValue) = (argument, String?.none)
            if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            func value() throws(ConfigurationError) -> String {
                if let inlineValue { return inlineValue }
                guard index < arguments.count else { throw ConfigurationError("\(name) needs a value") }
                index += 1
                return arguments[index - 1]
            }
            switch name {
            case "-h", "--help": return .help
            case "--version": return .version
            case "--healthcheck": mode = "healthcheck"
            case "--check-config": mode = "check-config"
            case "--sandbox": sandbox = true
            case "--config": configPath = try value()
            default:
                guard let setting = settings.first(where: { !$0.flag.isEmpty && $0.flag == name }) else {
                    throw ConfigurationError("unknown option \(argument); see --help")
                }
                flags.append((setting, try value()))
            }
        }

        var configuration = ProxyConfiguration()
        configuration.sandbox = sandbox
        let explicitFile = configPath != nil
        let path = configPath ?? defaultConfigPath
        if let data = readFile(path) {
            for (variable, value) in try parseFile(String(decoding: data, as: UTF8.self), path: path) {
                try apply(variable, value, to: &configuration)
            }
        } else if explicitFile {
            throw ConfigurationError("cannot read the configuration file \(path)")
        }
        for setting in settings {
            if let value = environment[setting.variable] { try setting.apply(&configuration, value) }
        }
        for (setting, value) in flags {
            try setting.apply(&configuration, value)
        }
        if configuration.limits.maxReadBufferBytes < configuration.limits.minimumReadBufferBytes {
            throw ConfigurationError(
                "AMODB_READ_BUFFER_BYTES must hold a whole request head: at least AMODB_MAX_REQUEST_LINE + AMODB_MAX_HEADER_BYTES + 4 = \(configuration.limits.minimumReadBufferBytes)")
        }
        if mode == "healthcheck" { return .healthcheck(configuration) }
        if mode == "check-config" { return .checkConfig(configuration) }
        if configuration.apiKey.isEmpty && !configuration.sandbox && mode != "check-config" {
            throw ConfigurationError("no amodb API key: set AMODB_KEY (or AMODB_KEY_FILE), or try the proxy offline with --sandbox")
        }
        return .serve(configuration)
    }

    /// A whole file's bytes, or `nil` if it cannot be read (also works for `/dev/null` and pipes).
    private static func readFile(_ path: String) -> Data? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        return try? handle.readToEnd() ?? Data()
    }

    private static func apply(_ variable: String, _ value: String, to configuration: inout ProxyConfiguration) throws(ConfigurationError) {
        guard let setting = settings.first(where: { $0.variable == variable }) else {
            throw ConfigurationError("unknown setting \(variable) in the configuration file")
        }
        try setting.apply(&configuration, value)
    }

    /// `NAME=value` lines; `#` starts a comment line; quotes around the value are dropped.
    static func parseFile(_ text: String, path: String) throws(ConfigurationError) -> [(String, String)] {
        var pairs: [(String, String)] = []
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingSpacesAndNewlines()
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let equals = line.firstIndex(of: "=") else {
                throw ConfigurationError("\(path):\(number + 1): expected NAME=value")
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

    private static func networks(_ text: String, _ name: String) throws(ConfigurationError) -> [String] {
        let networks = text.split(separator: ",").map { String($0.trimmingSpacesAndNewlines()) }.filter { !$0.isEmpty }
        for network in networks where TrustedProxies.Network(network) == nil {
            throw ConfigurationError("\(name) must list IP addresses or CIDR ranges such as 10.0.0.0/8, not \(network)")
        }
        return networks
    }

    private static func integer(_ text: String, _ name: String, _ range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
        guard let value = Int(text.trimmingSpacesAndNewlines()), range.contains(value) else {
            throw ConfigurationError("\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), not \(text)")
        }
        return value
    }

    private static func seconds(_ text: String, _ name: String, minimum: Double) throws(ConfigurationError) -> Double {
        guard let value = Double(text.trimmingSpacesAndNewlines()), value.isFinite, value >= minimum else {
            throw ConfigurationError("\(name) must be a number of seconds, at least \(minimum), not \(text)")
        }
        return value
    }

    /// The effective configuration as `NAME=value` lines (a valid settings file), with
    /// every secret redacted: what `--check-config` prints.
    public static func describe(_ configuration: ProxyConfiguration) -> String {
        var text = "# amodb-proxy \(version): effective configuration (secrets redacted)\n"
        if configuration.sandbox { text += "# sandbox mode: the built-in amodb stand-in replaces AMODB_UPSTREAM_URL and AMODB_KEY\n" }
        for setting in settings {
            let value = setting.show(configuration)
            text += value.isEmpty ? "# \(setting.variable) is not set\n" : "\(setting.variable)=\(value)\n"
        }
        return text
    }

    private static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }

    /// The `--help` text, written from the settings table.
    public static var usage: String {
        var text = """
        amodb-proxy \(version): holds the amodb API key and shares one cached answer per path.

        Usage: amodb-proxy [options]

          --sandbox             run against the built-in amodb stand-in (no key, no network)
          --config PATH         settings file of NAME=value lines [\(defaultConfigPath), if present]
          --healthcheck         exit 0 if the proxy on HOST/PORT answers /healthz (for containers)
          --check-config        print the effective configuration (secrets redacted) and exit
          --version             print the version
          -h, --help            print this help

        Settings (flag / environment variable; flags win over the environment, which wins over the file):

        """
        for setting in settings {
            let flag = setting.flag.isEmpty ? "(environment only)" : setting.flag + " VALUE"
            text += "  " + flag.padding(toLength: 24, withPad: " ", startingAt: 0) + setting.variable.padding(toLength: 24, withPad: " ", startingAt: 0) + setting.help + "\n"
        }
        return text
    }
}
