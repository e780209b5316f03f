import Foundation
import Synchronization

/// One line per event, as JSON, on standard error. Every line passes through a
/// scrubber that replaces the amodb key with `<redacted>`: the last line of defence
/// should any code ever interpolate it.
public struct ProxyLogger: Sendable {
    /// How much to say.
    public enum Level: Int, Sendable, Comparable, CaseIterable {
        case debug, info, warning, error

        /// The level's name as written in logs and settings.
        public var name: String { ["debug", "info", "warning", "error"][rawValue] }

        public init?(name: String) {
            guard let level = Level.allCases.first(where: { $0.name == name.lowercased() }) else { return nil }
            self = level
        }

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// Where lines go; tests capture them.
    public typealias Sink = @Sendable (String) -> Void

    public let minimumLevel: Level
    private let secrets: [APIKey]
    private let sink: Sink

    /// A logger that never lets `secrets` (the key) through.
    public init(minimumLevel: Level = .info, secrets: [APIKey] = [], sink: @escaping Sink = ProxyLogger.standardError) {
        self.minimumLevel = minimumLevel
        self.secrets = secrets.filter { !$0.isEmpty }
        self.sink = sink
    }

    /// Writes to standard error.
    public static let standardError: Sink = { line in
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// Logs an event with string fields.
    public func log(_ level: Level, _ message: String, _ fields: [String: String] = [:]) {
        guard level >= minimumLevel else { return }
        var object: [String: String] = fields
        object["time"] = ISO8601DateFormatter().string(from: Date())
        object["level"] = level.name
        object["message"] = message
        let data = (try? JSONEncoder.sorted.encode(object)) ?? Data()
        var line = String(decoding: data, as: UTF8.self)
        for secret in secrets where line.contains(secret.revealed) {
            line = line.replacingOccurrences(of: secret.revealed, with: "<redacted>")
        }
        sink(line)
    }

    public func debug(_ message: String, _ fields: [String: String] = [:]) { log(.debug, message, fields) }
    public func info(_ message: String, _ fields: [String: String] = [:]) { log(.info, message, fields) }
    public func warning(_ message: String, _ fields: [String: String] = [:]) { log(.warning, message, fields) }
    public func error(_ message: String, _ fields: [String: String] = [:]) { log(.error, message, fields) }
}
