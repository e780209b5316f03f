import Dispatch
import Synchronization

/// Events and errors, one line each (JSON or text) on standard error. Every line passes
/// a scrubber that replaces the secrets it was given (the amodb key) and the client tokens
/// in force (`AppTokens` hands them over) with `<redacted>`: the last line of defence
/// should any code ever interpolate one.
///
/// Repeats are summarised: the first `repeatBurst` lines of a kind (its level and
/// message) in `repeatWindow` seconds are written, more of that kind in the window are
/// counted, not written, and one line with their count (`repeated`) follows when the
/// window ends. A flood (a warning for every miss the spent budget denies) costs at
/// most eleven lines per window; a few lines of a kind, each about something else (a
/// route, a snapshot entry), all go out.
/// Copies of a logger share their level, which can change while running (`SIGHUP`),
/// their repeat windows and the secrets they scrub.
package struct ProxyLogger: Sendable {
    /// How much to say.
    package enum Level: Int, Sendable, Comparable, CaseIterable {
        case debug, info, warning, error

        /// The level's name as written in logs and settings.
        package var name: String { ["debug", "info", "warning", "error"][rawValue] }

        package init?(name: String) {
            guard let level = Level.allCases.first(where: { $0.name == name.lowercased() }) else { return nil }
            self = level
        }

        package static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// Where lines go; tests capture them.
    package typealias Sink = @Sendable (String) -> Void

    package let format: LogFormat
    private let scrubber: SecretScrubber
    private let sink: Sink
    private let shared: Shared

    /// The least severe level written; every copy of this logger follows a change.
    package var minimumLevel: Level {
        Level(rawValue: shared.level.load(ordering: .relaxed)) ?? .info
    }

    /// A logger that never lets `secrets` through and summarises more than `repeatBurst`
    /// lines of a kind within `repeatWindow` seconds (a window of 0: writes every line).
    package init(
        minimumLevel: Level = .info, format: LogFormat = .json, secrets: [Secret] = [],
        repeatWindow: Double = 5, repeatBurst: Int = 10, sink: @escaping Sink = { LineWriter.standardError.write($0) }
    ) {
        self.format = format
        self.scrubber = SecretScrubber(secrets: secrets)
        self.sink = sink
        self.shared = Shared(level: minimumLevel, repeatWindow: repeatWindow, repeatBurst: repeatBurst)
    }

    /// Kinds whose repeat window is open now.
    var openRepeatWindows: Int { shared.openWindows }

    /// Changes the level for every copy of this logger (a reload).
    package func setMinimumLevel(_ level: Level) {
        shared.level.store(level.rawValue, ordering: .relaxed)
    }

    /// Logs an event with string fields.
    package func log(_ level: Level, _ message: String, _ fields: [String: String] = [:]) {
        guard level >= minimumLevel else { return }
        if level > .debug,
            !shared.admit(
                kind: RepeatKind(level: level, message: message),
                summary: { [self] count, seconds in
                    write(
                        level, message, ["repeated": String(count), "window_seconds": LogValue.number(seconds).plain])
                })
        {
            return
        }
        write(level, message, fields)
    }

    private func write(_ level: Level, _ message: String, _ fields: [String: String]) {
        var ordered: [(String, LogValue)] = [
            ("time", .string(LogTime.now)), ("level", .string(level.name)), ("message", .string(message)),
        ]
        for name in fields.keys.sorted() { ordered.append((name, .string(fields[name]!))) }
        sink(scrubbed(format.line(ordered)))
    }

    /// A line with every secret replaced.
    func scrubbed(_ line: String) -> String {
        scrubber.scrubbed(line)
    }

    /// Scrubs `tokens`, the client tokens in force, from every copy's lines from now on,
    /// in place of the tokens handed over before.
    func scrubTokens(_ tokens: [Secret]) {
        scrubber.setTokens(tokens)
    }

    package func debug(_ message: String, _ fields: [String: String] = [:]) { log(.debug, message, fields) }
    package func info(_ message: String, _ fields: [String: String] = [:]) { log(.info, message, fields) }
    package func warning(_ message: String, _ fields: [String: String] = [:]) { log(.warning, message, fields) }
    package func error(_ message: String, _ fields: [String: String] = [:]) { log(.error, message, fields) }
}

/// What makes two log lines repeats of each other: level and message, not fields.
private struct RepeatKind: Hashable {
    let level: ProxyLogger.Level
    let message: String
}

/// The state copies of a logger share: the level and the open repeat windows.
private final class Shared: Sendable {
    /// A kind's open window: lines written and lines held back.
    private struct Window {
        var written = 1
        var suppressed = 0
    }

    let level: Atomic<Int>
    private let repeatWindow: Double
    private let repeatBurst: Int
    private let windows = Mutex<[RepeatKind: Window]>([:])
    /// Kinds tracked at once at most; past it lines of new kinds are written unsummarised.
    private static let maxKinds = 1024
    private static let timers = DispatchQueue(label: "amodb-proxy.log-repeats")

    init(level: ProxyLogger.Level, repeatWindow: Double, repeatBurst: Int) {
        self.level = Atomic(level.rawValue)
        self.repeatWindow = repeatWindow
        self.repeatBurst = max(1, repeatBurst)
    }

    var openWindows: Int { windows.withLock { $0.count } }

    /// Whether a line of `kind` goes out now. The first of a kind opens a window, which
    /// closes after `repeatWindow` seconds by calling `summary` if lines were held back.
    func admit(kind: RepeatKind, summary: @escaping @Sendable (Int, Double) -> Void) -> Bool {
        guard repeatWindow > 0 else { return true }
        let burst = repeatBurst
        let opened = windows.withLock { windows -> Bool? in
            if var window = windows[kind] {
                defer { windows[kind] = window }
                guard window.written < burst else {
                    window.suppressed += 1
                    return nil
                }
                window.written += 1
                return false
            }
            guard windows.count < Self.maxKinds else { return false }
            windows[kind] = Window()
            return true
        }
        // nil: held back; false: written in an open window (or untracked); true: a new window.
        guard let opened else { return false }
        guard opened else { return true }
        let window = repeatWindow
        Self.timers.asyncAfter(deadline: .now() + window) { [self] in
            let suppressed = windows.withLock { $0.removeValue(forKey: kind) }?.suppressed ?? 0
            if suppressed > 0 { summary(suppressed, window) }
        }
        return true
    }
}
