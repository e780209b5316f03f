extension ConfigurationLoader {
    /// Who stands between the clients and the proxy, and which web pages may call it.
    static let accessSettings: [Setting] = [
        Setting(
            "AMODB_TRUSTED_PROXIES", flag: "--trusted-proxies", \.trustedProxies, .networks,
            help: "peers (IPs/CIDRs) whose X-Forwarded-For is believed", accepts: "IPs and CIDRs",
            doc:
                "peers whose `X-Forwarded-For` is believed ([HTTPS](https.md#what-the-proxy-needs-to-know-amodb_trusted_proxies))"
        ),
        Setting(
            "AMODB_CORS_ORIGINS", flag: "--cors-origins", \.corsOrigins, .origins,
            help: "origins web apps may call from (comma-separated, or *)",
            accepts: "`http(s)://` origins without a path, or `*`",
            doc: "origins web apps may call from (comma-separated)"),
    ]
}

extension SettingValue where Value == [String] {
    /// Web origins (`https://app.example.com`, no path), or `*`.
    fileprivate static let origins = SettingValue(
        read: { value, name throws(ConfigurationError) in
            let origins = items(value)
            for origin in origins
            where origin != "*" && !(origin.hasPrefix("http://") || origin.hasPrefix("https://"))
                || origin.hasSuffix("/")
            {
                throw ConfigurationError(
                    "\(name) must list origins such as https://app.example.com (no path), or *, not \(ConfigurationLoader.shown(origin))"
                )
            }
            return origins
        }, show: { $0.joined(separator: ",") })
}
