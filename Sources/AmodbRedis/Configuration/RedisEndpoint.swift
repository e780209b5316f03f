/// Where Redis is and how to log in: what a Redis URL
/// (`redis[s]://[[user]:password@]host[:port][/db]`) says.
public struct RedisEndpoint: Sendable, Equatable, CustomStringConvertible {
    /// Host name or IP literal (an IPv6 literal without its brackets).
    public var host: String
    /// TCP port; 6379 unless the URL says otherwise.
    public var port: Int
    /// ACL user name (`AUTH user password`); `nil` logs in as `default` (`AUTH password`).
    public var username: String?
    /// Password for `AUTH`; `nil` sends no `AUTH`.
    public var password: RedisPassword?
    /// Logical database selected after connecting (`SELECT`); 0 is Redis's default.
    public var database: Int
    /// Whether the connection is TLS (`rediss://`), the server's certificate verified and
    /// its name checked against `host`.
    public var usesTLS: Bool

    /// An endpoint given piece by piece.
    public init(
        host: String, port: Int = 6379, username: String? = nil, password: RedisPassword? = nil, database: Int = 0,
        usesTLS: Bool = false
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.usesTLS = usesTLS
    }

    /// Parses `redis[s]://[[user]:password@]host[:port][/db]` (`rediss://`: TLS). User and
    /// password may be percent-encoded (for `@`, `:` or `/` in them). Refuses another
    /// scheme, an empty host, a port or db that is not a number.
    public init(url: String) throws(RedisURLError) {
        let text = Substring(url)
        guard let schemeEnd = text.firstRange(of: "://") else {
            throw RedisURLError("expected redis[s]://[[user]:password@]host[:port][/db]")
        }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "redis" || scheme == "rediss" else {
            throw RedisURLError("scheme \"\(scheme)\" is not supported; expected redis:// or rediss://")
        }

        var rest = text[schemeEnd.upperBound...]
        var databaseText: Substring?
        if let slash = rest.firstIndex(of: "/") {
            databaseText = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
        }
        var username: String?
        var password: RedisPassword?
        if let at = rest.lastIndex(of: "@") {
            let userinfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            guard let colon = userinfo.firstIndex(of: ":") else {
                throw RedisURLError("credentials must be [user]:password@ (a colon before the password)")
            }
            let user = try Self.percentDecoded(userinfo[..<colon], what: "user")
            username = user.isEmpty ? nil : user
            password = RedisPassword(
                try Self.percentDecoded(userinfo[userinfo.index(after: colon)...], what: "password"))
        }

        var host = rest
        var portText: Substring?
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else {
                throw RedisURLError("IPv6 host is missing its closing ]")
            }
            let after = host[host.index(after: close)...]
            if after.hasPrefix(":") {
                portText = after.dropFirst()
            } else if !after.isEmpty {
                throw RedisURLError("unexpected text after the IPv6 host")
            }
            host = host[host.index(after: host.startIndex)..<close]
        } else if let colon = host.lastIndex(of: ":") {
            portText = host[host.index(after: colon)...]
            host = host[..<colon]
        }
        guard !host.isEmpty else { throw RedisURLError("the host is empty") }

        var port = 6379
        if let portText {
            guard let number = Self.decimal(portText), (1...65535).contains(number) else {
                throw RedisURLError("port \"\(portText.prefix(16))\" is not a number from 1 to 65535")
            }
            port = number
        }
        var database = 0
        if let databaseText, !databaseText.isEmpty {
            guard let number = Self.decimal(databaseText) else {
                throw RedisURLError("database \"\(databaseText.prefix(16))\" is not a number")
            }
            database = number
        }
        self.init(
            host: String(host), port: port, username: username, password: password, database: database,
            usesTLS: scheme == "rediss")
    }

    /// The URL again, password redacted: safe for `--check-config` and logs.
    public var description: String {
        var credentials = ""
        if password != nil {
            credentials = "\(username ?? ""):<redacted>@"
        } else if let username {
            credentials = "\(username)@"
        }
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "\(usesTLS ? "rediss" : "redis")://\(credentials)\(shownHost):\(port)/\(database)"
    }

    /// A non-negative decimal of at most 9 digits (no sign, no spaces).
    private static func decimal(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.count <= 9, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(text)
    }

    /// `%XX` sequences decoded as UTF-8; a malformed one is refused rather than kept.
    private static func percentDecoded(_ text: Substring, what: String) throws(RedisURLError) -> String {
        var bytes: [UInt8] = []
        var index = text.utf8.startIndex
        let utf8 = text.utf8
        while index < utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%") {
                let first = utf8.index(after: index)
                guard first < utf8.endIndex, utf8.index(after: first) < utf8.endIndex,
                    let high = hexValue(utf8[first]), let low = hexValue(utf8[utf8.index(after: first)])
                else { throw RedisURLError("the \(what) has a malformed %-escape") }
                bytes.append(high << 4 | low)
                index = utf8.index(first, offsetBy: 2)
            } else {
                bytes.append(byte)
                index = utf8.index(after: index)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }
}
