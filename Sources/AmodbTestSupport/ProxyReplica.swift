import Foundation
import Synchronization

/// One replica of the proxy as a child process of the built `amodb-proxy`, configured by
/// its environment as an operator's would be: started, killed with SIGKILL (so everything
/// it held in memory is lost, as when a host dies), and started again.
///
/// Each start listens on a port the kernel chooses (`PORT=0`), read from its own
/// "amodb-proxy listening" log line. `endpoint` says where it listens now, and which life
/// of the process that is: the generation changes at every kill, so a request that failed
/// can tell whether its replica was killed under it.
package final class ProxyReplica: Sendable {
    /// Where a running replica listens, and which of its lives answers there.
    package struct Endpoint: Sendable, Equatable {
        package var port: Int
        package var generation: Int
    }

    /// What the replica is called in reports.
    package let name: String
    private let binary: ProxyBinary
    private let environment: [String: String]
    private let state = Mutex(State())

    private struct State: Sendable {
        var process: ChildProcess?
        /// Set once the current process has said where it listens; nil while it starts or is down.
        var port: Int?
        var generation = 0
        /// The event log lines of the lives before this one, oldest first.
        var earlierLives: [String] = []
    }

    /// A replica of `binary` that will run with exactly `environment` (nothing inherited);
    /// `HOST` and `PORT` are set to loopback and 0, and the event log to JSON on standard
    /// error, which the replica reads its port from.
    package init(name: String, binary: ProxyBinary, environment: [String: String]) {
        self.name = name
        self.binary = binary
        self.environment = environment.merging(
            ["HOST": "127.0.0.1", "PORT": "0", "AMODB_LOG_FORMAT": "json"], uniquingKeysWith: { $1 })
    }

    /// Where it listens now, or nil while it is down or starting.
    package var endpoint: Endpoint? {
        state.withLock { state in state.port.map { Endpoint(port: $0, generation: state.generation) } }
    }

    /// Which life of the process this is: 0 for the first, one more after each kill.
    package var generation: Int {
        state.withLock { $0.generation }
    }

    /// Starts the process (it must not be running) and returns at once; `waitUntilListening`
    /// says when it serves.
    package func launch() throws {
        try state.withLock { state in
            precondition(state.process?.isRunning != true, "\(name) is already running")
            state.process = try binary.launch([], environment: environment, standardError: .pipe)
            state.port = nil
        }
    }

    /// Waits up to `seconds` for the current process to say where it listens, then serves
    /// requests there; returns the port, or nil if it did not (it exited, or was too slow).
    @discardableResult
    package func waitUntilListening(within seconds: Double = 30) async -> Int? {
        guard let process = state.withLock({ $0.process }) else { return nil }
        var port: Int?
        _ = await eventually(within: seconds) {
            port = Self.listeningPort(in: process.standardError?.lines ?? [])
            return port != nil || !process.isRunning
        }
        guard let port else { return nil }
        return state.withLock { state in
            // A kill in the meantime made this port the previous life's.
            guard state.process === process else { return nil }
            state.port = port
            return port
        }
    }

    /// Kills the process with SIGKILL and waits for it to be gone. The endpoint is withdrawn
    /// first, so no new request is sent to the life that is dying.
    package func kill() async {
        await stop(with: SIGKILL, marker: "killed")
    }

    /// Stops the process with SIGTERM (it drains and exits as on a redeploy) and waits for it.
    package func terminate() async {
        await stop(with: SIGTERM, marker: "stopped")
    }

    /// Sends `signal`, waits for the process to exit, and keeps its log lines with `marker` after them.
    private func stop(with signal: Int32, marker: String) async {
        let process = state.withLock { state -> ChildProcess? in
            state.port = nil
            state.generation += 1
            defer { state.process = nil }
            return state.process
        }
        guard let process else { return }
        process.kill(signal)
        _ = try? await offloaded { process.waitUntilExit() }
        // The pipe ends when the process is gone; its last lines are read by then or soon after.
        let output = process.standardError
        _ = await eventually(within: 2) { output?.isFinished ?? true }
        let lines = output?.lines ?? []
        state.withLock { $0.earlierLives += lines + ["(\(name) \(marker) here)"] }
    }

    /// The event log lines (JSON) of every life so far, oldest first, a kill marked between
    /// two lives: what a report shows of what the replica saw.
    package var eventLog: [String] {
        let (earlier, process) = state.withLock { ($0.earlierLives, $0.process) }
        return earlier + (process?.standardError?.lines ?? [])
    }

    /// The event log lines at level warning or above, of every life, without those that
    /// contain any of `excluded` (a warning repeated for every refused miss would hide the
    /// rest), the last `count` of them; the kill markers are kept.
    package func warnings(last count: Int, excluding excluded: [String] = []) -> [String] {
        let lines = eventLog.filter { line in
            guard !line.hasPrefix("(") else { return true }
            let isWarning = line.contains(#""level":"warning""#) || line.contains(#""level":"error""#)
            return isWarning && !excluded.contains { line.contains($0) }
        }
        return Array(lines.suffix(count))
    }

    /// The port in the "amodb-proxy listening" line, if it is among `lines`.
    static func listeningPort(in lines: [String]) -> Int? {
        for line in lines where line.contains("amodb-proxy listening") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let address = object["address"] as? String,
                let port = address.split(separator: ":").last.flatMap({ Int($0) })
            else { continue }
            return port
        }
        return nil
    }
}

extension ProxyReplica: ScopedServer {
    /// Stops the replica (SIGKILL: a test needs nothing it would save) and waits for it.
    package func shutdown() async {
        await kill()
    }
}
