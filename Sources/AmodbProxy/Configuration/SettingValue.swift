import AmodbModels
import AmodbRedis
import AmodbSockets
import Foundation

/// How a setting's text becomes a value, and the value text again: the parser a setting
/// names in its table. Errors say the setting's name, given by the setting, and quote the
/// text through `ConfigurationLoader.shown`.
struct SettingValue<Value>: Sendable {
    /// The value `text` means, or an error on one line naming the setting `name`.
    let read: @Sendable (_ text: String, _ name: String) throws(ConfigurationError) -> Value
    /// The value as a settings file would say it (`--check-config`, `--help`'s default).
    let show: @Sendable (Value) -> String
    /// Whether the text is, or names, a secret.
    var secrecy = ConfigurationLoader.Secrecy.none
}

extension SettingValue {
    /// The value of a file whose path is the setting's text, read as `contents` reads text; shown
    /// as nothing, for the value is a secret and the path is not the value.
    static func file(holding contents: SettingValue) -> SettingValue {
        SettingValue(
            read: { path, name throws(ConfigurationError) in
                guard let data = ConfigurationLoader.readFile(path) else {
                    throw ConfigurationError("cannot read \(name) \(ConfigurationLoader.shown(path))")
                }
                return try contents.read(String(decoding: data, as: UTF8.self), name)
            }, show: { _ in "" }, secrecy: .secretFile)
    }
}

extension ConfigurationLoader {
    /// An hour, a day and a year in seconds: the upper ends of the duration settings. A
    /// duration beyond its range is a typo, and some would overflow where they are used
    /// (`1e19` seconds is no `Int`, `1e300` no deadline FoundationNetworking can hold).
    static let hour: Double = 3600, day: Double = 86_400, year: Double = 365 * 86_400
}

extension SettingValue where Value == Double {
    /// A number of seconds in `range`, a fraction allowed.
    static func seconds(_ range: ClosedRange<Double>) -> SettingValue {
        SettingValue(
            read: { text, name throws(ConfigurationError) in
                guard let value = Double(text.trimmingSpacesAndNewlines()), value.isFinite, range.contains(value)
                else {
                    throw ConfigurationError(
                        "\(name) must be a number of seconds from \(Self.format(range.lowerBound)) to \(Self.format(range.upperBound)), not \(ConfigurationLoader.shown(text))"
                    )
                }
                return value
            }, show: Self.format)
    }

    /// A fraction above 0 and at most 1.
    static let share = SettingValue(
        read: { text, name throws(ConfigurationError) in
            guard let share = Double(text.trimmingSpacesAndNewlines()), share.isFinite, share > 0, share <= 1 else {
                throw ConfigurationError(
                    "\(name) must be a fraction above 0 and at most 1 (such as 0.125), not \(ConfigurationLoader.shown(text))"
                )
            }
            return share
        }, show: Self.format)

    /// Seconds as a settings file says them: whole ones without a fraction.
    static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }
}

extension SettingValue where Value == Int {
    /// A whole number in `range`.
    static func integer(_ range: ClosedRange<Int>) -> SettingValue {
        SettingValue(
            read: { text, name throws(ConfigurationError) in
                guard let value = Int(text.trimmingSpacesAndNewlines()), range.contains(value) else {
                    throw ConfigurationError(
                        "\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), not \(ConfigurationLoader.shown(text))"
                    )
                }
                return value
            }, show: { String($0) })
    }
}

extension SettingValue where Value == Int? {
    /// A whole number in `range`; empty: none (the default the setting describes).
    static func optionalInteger(_ range: ClosedRange<Int>) -> SettingValue {
        let integer = SettingValue<Int>.integer(range)
        return SettingValue(
            read: { text, name throws(ConfigurationError) in
                text.trimmingSpacesAndNewlines().isEmpty ? nil : try integer.read(text, name)
            }, show: { $0.map(String.init) ?? "" })
    }
}

extension SettingValue where Value == Bool {
    /// `on` or `off`, or the usual words for them.
    static let onOff = SettingValue(
        read: { text, name throws(ConfigurationError) in
            switch text.lowercased() {
            case "on", "true", "1", "yes": return true
            case "off", "false", "0", "no": return false
            default: throw ConfigurationError("\(name) must be on or off, not \(ConfigurationLoader.shown(text))")
            }
        }, show: { $0 ? "on" : "off" })
}

extension SettingValue where Value == String? {
    /// Any text, such as a path; empty: none.
    static let optional = SettingValue(read: { text, _ in text.isEmpty ? nil : text }, show: { $0 ?? "" })
}

extension SettingValue where Value == [String] {
    /// A comma-separated list, each item trimmed, empty items dropped.
    static let list = SettingValue(read: { text, _ in items(text) }, show: { $0.joined(separator: ",") })

    /// A comma-separated list of IP addresses and CIDR ranges.
    static let networks = SettingValue(
        read: { text, name throws(ConfigurationError) in
            let networks = items(text)
            for network in networks where TrustedProxies.Network(network) == nil {
                throw ConfigurationError(
                    "\(name) must list IP addresses or CIDR ranges such as 10.0.0.0/8, not \(ConfigurationLoader.shown(network))"
                )
            }
            return networks
        }, show: { $0.joined(separator: ",") })

    /// The items of a comma-separated list, trimmed, without empty ones.
    static func items(_ text: String) -> [String] {
        text.split(separator: ",").map { String($0.trimmingSpacesAndNewlines()) }.filter { !$0.isEmpty }
    }
}

extension SettingValue where Value == [Route.Kind] {
    /// Names of `RouteTable`'s entries not served by default, comma-separated, or `all`.
    static let routes = SettingValue(
        read: { text, name throws(ConfigurationError) in
            let optional = RouteTable.entries.filter { !$0.byDefault }
            var kinds: [Route.Kind] = []
            for item in SettingValue<[String]>.items(text) {
                if item == "all" {
                    kinds += optional.map(\.kind)
                } else if let entry = RouteTable.entry(named: item), !entry.byDefault {
                    kinds.append(entry.kind)
                } else {
                    throw ConfigurationError(
                        "\(name) must name routes among \(optional.map(\.name).joined(separator: ", ")), or all, not \(ConfigurationLoader.shown(item))"
                    )
                }
            }
            return Array(Set(kinds)).sorted { $0.rawValue < $1.rawValue }
        }, show: { $0.map(\.entry.name).joined(separator: ",") })
}

extension SettingValue where Value == Secret {
    /// The amodb key from a setting or a file: without a byte order mark and surrounding
    /// white space; refused with a control character inside (a CR, LF or NUL would make
    /// the `Authorization` field unsendable, and the proxy would call amodb without one).
    /// The error never shows the key.
    static let key = SettingValue(
        read: { text, name throws(ConfigurationError) in try ConfigurationLoader.apiKey(text, name) },
        show: { $0.isEmpty ? "" : "<redacted>" }, secrecy: .secret)

    /// A file holding the key, which must hold one.
    static let keyFile = SettingValue(
        read: { path, name throws(ConfigurationError) in
            let key = try file(holding: key).read(path, name)
            if key.isEmpty { throw ConfigurationError("\(name) \(ConfigurationLoader.shown(path)) holds no key") }
            return key
        }, show: { _ in "" }, secrecy: .secretFile)
}

extension SettingValue where Value == Secret? {
    /// The HS256 secret of users' ID tokens, read as the key is, and at least 32 bytes
    /// (RFC 7518 §3.2: a key as long as the hash); empty: none. The error never shows it.
    static let hmacSecret = SettingValue(
        read: { text, name throws(ConfigurationError) in try ConfigurationLoader.jwtSecret(text, name) },
        show: { $0 == nil ? "" : "<redacted>" }, secrecy: .secret)
}

extension SettingValue where Value == [Secret] {
    /// Comma-separated tokens; shown as their count only.
    static let tokens = SettingValue(
        read: { text, _ in text.split(separator: ",").map { Secret(String($0)) }.filter { !$0.isEmpty } },
        show: { $0.isEmpty ? "" : "<\($0.count) redacted>" }, secrecy: .secretList)
}
