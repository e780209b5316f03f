import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The calls to amodb this replica made in the last window, on disk, so that they survive
/// a restart (`kill -9` included): a replica that restarts within a minute of a burst must
/// not spend the window again. Each grant is written (and synced) before the call goes out,
/// each answer when it comes back; the file is rewritten with only the calls still in the
/// window once it has grown, so it stays a few kilobytes.
///
/// A replica of a fleet also writes the window it last saw in Redis (`SharedBudget.Seen`),
/// so that after a restart it can still tell a window that was lost meanwhile.
///
/// The file is `budget-calls.log` in the state directory (`AMODB_STATE_DIR`), locked for one
/// process: a second proxy pointed at the same directory refuses to start rather than
/// spending the same minute twice. Lines: a header, then `g <id> <ms> <f|r>` (a call granted,
/// counting until `<ms>`, from the fleet's window or this replica's reserve), `c <id> <ms>`
/// (it came back then), `w <epoch> <seq>` (the fleet's window seen). Times are wall-clock
/// milliseconds since 1970, as they must outlive the process.
package final class CallLedger: Sendable {
    /// A call read back from the file.
    struct Call: Sendable, Equatable {
        var id: String
        /// Until when amodb may count it (wall-clock seconds).
        var until: Double
        /// Spent from this replica's reserve, not from the fleet's window.
        var reserve: Bool
    }

    /// What the file held when the proxy started.
    package struct Loaded: Sendable, Equatable {
        /// The calls that may still be in amodb's window, oldest first.
        var calls: [Call] = []
        /// The fleet's window as last seen (`SharedBudget.Seen.nothing`: none).
        var seen = SharedBudget.Seen.nothing
        /// The file was there but could not be read whole: its calls are unknown, so the
        /// window must be taken as full.
        package var damaged = false
        /// Whether there was a file at all (no file: this directory's first start).
        package var existed = false
    }

    /// Why the ledger cannot be used.
    package struct LedgerError: Error, CustomStringConvertible {
        package let description: String
    }

    private struct State {
        var handle: FileHandle
        /// Lines written since the file was last rewritten.
        var appended = 0
        /// What a rewrite keeps: the calls by id, and the window seen.
        var calls: [String: Call] = [:]
        var seen = SharedBudget.Seen.nothing
    }

    /// The file's path.
    package let path: String
    /// What it held at start.
    package let loaded: Loaded
    private let window: Double
    /// Whether each grant is synced to the disk before the call goes out (a test that writes
    /// thousands of lines to see the file rewritten may skip it).
    private let durable: Bool
    private let state: Mutex<State>
    /// Set when a write failed: logged once.
    private let failed = Atomic<Bool>(false)
    private let logger: ProxyLogger?

    static let fileName = "budget-calls.log"
    private static let header = "amodb-proxy budget calls v1"
    /// Lines appended before the file is rewritten with only the calls still in the window.
    static let rewriteAfter = 512

    /// Opens (creating it and its directory if need be) and locks the ledger in `directory`,
    /// and reads what it holds, at `now` (wall-clock seconds), for a window of `window` seconds.
    package init(
        directory: String, window: Double = UpstreamBudget.window, now: Double, logger: ProxyLogger? = nil,
        durable: Bool = true
    ) throws(LedgerError) {
        self.durable = durable
        path = directory.hasSuffix("/") ? directory + Self.fileName : directory + "/" + Self.fileName
        self.window = window
        self.logger = logger
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw LedgerError(
                description: "cannot create the state directory \(directory): \(error.localizedDescription)")
        }
        let existed = FileManager.default.fileExists(atPath: path)
        let descriptor = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw LedgerError(description: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw LedgerError(
                description:
                    "another amodb-proxy process uses \(path): give each proxy its own AMODB_STATE_DIR, or it would spend the same minute twice"
            )
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var loaded = Loaded()
        loaded.existed = existed
        if existed {
            let data = (try? handle.readToEnd()) ?? nil
            loaded = Self.read(data.map { String(decoding: $0, as: UTF8.self) } ?? "", now: now, window: window)
            loaded.existed = true
        }
        self.loaded = loaded
        var initial = State(handle: handle)
        for call in loaded.calls { initial.calls[call.id] = call }
        initial.seen = loaded.seen
        state = Mutex(initial)
        rewrite(now: now)
    }

    /// Reads a ledger's text: the calls that may still count at `now`, the window seen, and
    /// whether any line was unreadable.
    static func read(_ text: String, now: Double, window: Double) -> Loaded {
        var loaded = Loaded(existed: true)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        // A file ends with a newline; what follows the last one was cut off mid-write.
        if lines.last?.isEmpty == true { lines.removeLast() } else { loaded.damaged = true }
        guard lines.first == Substring(header) else {
            loaded.damaged = true
            return loaded
        }
        var calls: [String: Call] = [:]
        var order: [String] = []
        for line in lines.dropFirst() {
            let fields = line.split(separator: " ")
            switch (fields.first, fields.count) {
            case ("g", 4):
                guard let at = Double(fields[2]), at.isFinite, fields[3] == "f" || fields[3] == "r" else {
                    loaded.damaged = true
                    continue
                }
                let id = String(fields[1])
                if calls[id] == nil { order.append(id) }
                calls[id] = Call(id: id, until: at / 1000, reserve: fields[3] == "r")
            case ("c", 3):
                guard let at = Double(fields[2]), at.isFinite else {
                    loaded.damaged = true
                    continue
                }
                calls[String(fields[1])]?.until = at / 1000
            case ("w", 3):
                guard let sequence = Int64(fields[2]) else {
                    loaded.damaged = true
                    continue
                }
                loaded.seen = SharedBudget.Seen(epoch: String(fields[1]), sequence: sequence)
            default:
                loaded.damaged = true
            }
        }
        loaded.calls = order.compactMap { calls[$0] }.filter { $0.until > now - window }.sorted { $0.until < $1.until }
        return loaded
    }

    /// A call granted: written and synced before it goes out. `until`: when amodb may count
    /// it at the latest (its grant plus a call's time).
    func granted(_ id: String, until: Double, reserve: Bool) {
        let call = Call(id: id, until: until, reserve: reserve)
        append("g \(id) \(Self.milliseconds(until)) \(reserve ? "r" : "f")\n", sync: durable) { $0.calls[id] = call }
    }

    /// The call `id` came back at `at`: it counts until then, no longer until its grant's end.
    func completed(_ id: String, at: Double) {
        append("c \(id) \(Self.milliseconds(at))\n", sync: false) { $0.calls[id]?.until = at }
    }

    /// The fleet's window as this replica saw it last, written when its epoch changed or
    /// its sequence number grew.
    func saw(_ seen: SharedBudget.Seen) {
        let changed = state.withLock { state -> Bool in
            guard state.seen != seen else { return false }
            state.seen = seen
            return true
        }
        if changed { append("w \(seen.epoch) \(seen.sequence)\n", sync: false) { _ in } }
    }

    private func append(_ line: String, sync: Bool, _ update: (inout State) -> Void) {
        let due = state.withLock { state -> Bool in
            update(&state)
            do {
                try state.handle.write(contentsOf: Data(line.utf8))
                if sync { try state.handle.synchronize() }
            } catch {
                report(error)
            }
            state.appended += 1
            return state.appended >= Self.rewriteAfter
        }
        if due { rewrite(now: Date().timeIntervalSince1970) }
    }

    /// Writes the file anew with only the calls still in the window at `now`, through a
    /// temporary file renamed over it (so a crash leaves the old file or the new one).
    func rewrite(now: Double) {
        state.withLock { state in
            state.calls = state.calls.filter { $0.value.until > now - window }
            var text = Self.header + "\n"
            if !state.seen.epoch.isEmpty { text += "w \(state.seen.epoch) \(state.seen.sequence)\n" }
            for call in state.calls.values.sorted(by: { $0.until < $1.until }) {
                text += "g \(call.id) \(Self.milliseconds(call.until)) \(call.reserve ? "r" : "f")\n"
            }
            let temporary = path + ".new"
            do {
                try Data(text.utf8).write(to: URL(fileURLWithPath: temporary))
                let descriptor = open(temporary, O_RDWR | O_APPEND | O_CLOEXEC)
                guard descriptor >= 0, flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                    if descriptor >= 0 { close(descriptor) }
                    throw LedgerError(description: "cannot reopen \(temporary)")
                }
                let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
                try handle.synchronize()
                guard Glibc.rename(temporary, path) == 0 else {
                    throw LedgerError(description: "cannot rename to \(path): \(String(cString: strerror(errno)))")
                }
                state.handle = handle
                state.appended = 0
            } catch {
                report(error)
            }
        }
    }

    /// Logs the first failed write: the proxy goes on (the calls are in memory), but a
    /// restart would not know them.
    private func report(_ error: any Error) {
        guard !failed.exchange(true, ordering: .relaxed) else { return }
        logger?.error(
            "cannot write the budget's calls to the state directory: a restart will not know the calls of the last minute",
            ["path": path, "problem": "\(error)"])
    }

    private static func milliseconds(_ seconds: Double) -> Int64 {
        Int64((seconds * 1000).rounded(.up))
    }
}
