import AmodbSockets

extension ConfigurationLoader {
    /// Where the proxy listens.
    static let listeningSettings: [Setting] = [
        Setting(
            "HOST", flag: "--host", \.host, .listeningAddress, help: "address to listen on",
            accepts: "an IPv4 or IPv6 literal", doc: "address to listen on"),
        Setting(
            "PORT", flag: "--port", \.port, .integer(0...65535), help: "port to listen on",
            accepts: "0–65535 (0: the OS picks)", doc: "port to listen on"),
        Setting(
            "AMODB_OPERATOR_PORT", flag: "--operator-port", \.operatorPort, .optionalInteger(0...65535),
            help: "serve /metrics, /status, /status.json on this port only (none: on PORT)",
            accepts: "0–65535 (0: the OS picks)",
            doc:
                "a port of their own for the operator's pages (`/metrics`, `/status`, `/status.json`, `/readyz`'s details); `PORT` then answers them `404` ([operations](operations.md#the-operators-port))",
            example: "9090"),
        Setting(
            "AMODB_OPERATOR_HOST", flag: "--operator-host", \.operatorHost, .listeningAddress,
            help: "address the operator's port listens on", accepts: "an IPv4 or IPv6 literal",
            doc: "address the operator's port listens on (loopback: only this machine or container)"),
    ]

    /// How the proxy stops.
    static let shutdownSettings: [Setting] = [
        Setting(
            "AMODB_SHUTDOWN_GRACE", flag: "--shutdown-grace", \.shutdownGraceSeconds, .seconds(0...hour),
            help: "seconds in-flight requests get on SIGTERM", accepts: "0 – an hour",
            doc: "seconds in-flight requests and fetches get on SIGTERM")
    ]
}

extension SettingValue where Value == String {
    /// What the listener binds: an address, not a name (nothing is resolved at start).
    fileprivate static let listeningAddress = SettingValue(
        read: { value, name throws(ConfigurationError) in
            guard SocketAddress(host: value, port: 0) != nil else {
                throw ConfigurationError(
                    "\(name) must be an IP address to listen on, such as 0.0.0.0, 127.0.0.1 or :: (names such as localhost are not resolved), not \(ConfigurationLoader.shown(value))"
                )
            }
            return value
        }, show: { $0 })
}
