import Foundation

extension ConfigurationLoader {
    /// amodb's key and where amodb is.
    static let upstreamAccountSettings: [Setting] = [
        Setting(
            "AMODB_KEY", flag: "", \.apiKey, .key, help: "amodb API key (prefer AMODB_KEY_FILE in containers)",
            accepts: "text without control characters", doc: "the amodb key (no flag: it would show in `ps`)"),
        Setting(
            "AMODB_KEY_FILE", flag: "--key-file", \.apiKey, .keyFile, help: "file holding the amodb API key",
            accepts: "a readable file that holds a key", doc: "file holding the key (container secrets)",
            example: "/run/secrets/amodb_key"),
        Setting(
            "AMODB_UPSTREAM_URL", flag: "--upstream-url", \.upstreamURL, .upstreamURL, help: "amodb API root",
            accepts: "an `http(s)` URL with a host, no query", doc: "amodb's API root; a path prefix is kept"),
    ]

    /// How calls to amodb are made.
    static let upstreamCallSettings: [Setting] = [
        Setting(
            "AMODB_UPSTREAM_TIMEOUT", flag: "--upstream-timeout", \.upstreamTimeout, .seconds(0.1...hour),
            help: "seconds to wait for amodb", accepts: "0.1 s – an hour",
            doc: "seconds a whole call to amodb may take, last byte included"),
        Setting(
            "AMODB_MAX_UPSTREAM_BYTES", flag: "--max-upstream-bytes", \.maxUpstreamBytes,
            .integer(1024...1_073_741_824), help: "largest amodb body in bytes, after decoding",
            accepts: "1 KiB – 1 GiB",
            doc: "largest amodb body in bytes, counted after decoding; beyond it `502`, not stored"
        ),
        Setting(
            "AMODB_RETRY_AFTER_MAX", flag: "--retry-after-max", \.retryAfterCap, .seconds(0...hour),
            help: "longest amodb Retry-After waited out, seconds", accepts: "0 – an hour",
            doc: "longest `Retry-After` waited out"),
    ]
}

extension SettingValue where Value == String {
    /// An `http(s)` URL with a host and no query; a trailing `/` is dropped.
    fileprivate static let upstreamURL = SettingValue(
        read: { value, name throws(ConfigurationError) in
            guard let url = URL(string: value), let scheme = url.scheme?.lowercased(),
                scheme == "http" || scheme == "https",
                url.host != nil, url.query == nil
            else {
                throw ConfigurationError(
                    "\(name) must be an http(s) URL such as https://api.amodb.dev/3, not \(ConfigurationLoader.shown(value))"
                )
            }
            return value.hasSuffix("/") ? String(value.dropLast()) : value
        }, show: { $0 })
}
