import Foundation
/// Events and errors, one line each (JSON or text) on standard error. Every line passes
/// a scrubber that replaces the secrets it was given (the amodb key, client tokens) with
/// `<redacted>`: the last line of defence should any code ever interpolate one.
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
    public let format: LogFormat
    private let secrets: [Secret]
    private let sink: Sink

    /// A logger that never lets `secrets` through.
    public init(
        minimumLevel: Level = .info, format: LogFormat = .json, secrets: [Secret] = [],
        sink: @escaping Sink = { LineWriter.standardError.write($0) }
    ) {
        self.minimumLevel = minimumLevel
        self.format = format
        self.secrets = secrets.filter { !$0.isEmpty }
        self.sink = sink
    }

    /// Logs an event with string fields.
    public func log(_ level: Level, _ message: String, _ fields: [String: String] = [:]) {
        guard level >= minimumLevel else { return }
        var ordered: [(String, LogValue)] = [("time", .string(LogTime.now)), ("level", .string(level.name)), ("message", .string(message))]
        for name in fields.keys.sorted() { ordered.append((name, .string(fields[name]!))) }
        sink(scrubbed(format.line(ordered)))
    }

    /// A line with every secret replaced.
    func scrubbed(_ line: String) -> String {
        var line = line
        for secret in secrets where ByteSearch.contains(line.utf8, secret.revealed.utf8) {
            line = line.replacingOccurrences(of: secret.revealed, with: "<redacted>")
        }
        return line
    }

    public func debug(_ message: String, _ fields: [String: String] = [:]) { log(.debug, message, fields) }
    public func info(_ message: String, _ fields: [String: String] = [:]) { log(.info, message, fields) }
    public func warning(_ message: String, _ fields: [String: String] = [:]) { log(.warning, message, fields) }
    public func error(_ message: String, _ fields: [String: String] = [:]) { log(.error, message, fields) }
}
