package import AmodbRedis
public import AmodbTestSupport
import Foundation
import Synchronization

/// A real `redis-server` for tests: started on a free port in a temporary directory, with
/// no persistence (`--save '' --appendonly no`), stopped, paused, restarted on the same port;
/// TLS only on that port when started with `tls` (Debian's `redis-server` has TLS built in).
///
/// Redis needs an explicit port (it cannot report one the kernel chose), so `start` picks
/// one, and if the bind fails (another process has it) tries another.
package final class RedisServer: Sendable {
    /// Why a server could not be started.
    package struct StartError: Error, CustomStringConvertible {
        /// What went wrong, with the end of the server's log.
        package let description: String
    }

    /// Where `redis-server` is, if installed.
    package static let executable: String? = [
        "/usr/bin/redis-server", "/usr/local/bin/redis-server", "/opt/homebrew/bin/redis-server",
    ]
    .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Whether the tests that need a server can run here.
    package static var isInstalled: Bool { executable != nil }

    /// The message a suite shows when it is skipped for want of the binary.
    package static let notInstalledMessage =
        "redis-server is not installed (apt-get install redis-server); Redis tests skipped"

    /// The port it listens on (127.0.0.1).
    package let port: Int
    /// The `requirepass` password, if any.
    package let password: String?
    /// How it speaks TLS; `nil`: plain text.
    package let tls: RedisServerTLS?
    private let directory: URL
    private let arguments: [String]
    private let mode: RunningProcess.Mode
    private let running: Mutex<RunningProcess?>

    private init(
        port: Int, password: String?, tls: RedisServerTLS?, directory: URL, arguments: [String],
        mode: RunningProcess.Mode = .server, process: RunningProcess
    ) {
        self.port = port
        self.mode = mode
        self.password = password
        self.tls = tls
        self.directory = directory
        self.arguments = arguments
        self.running = Mutex(process)
    }

    /// Starts a server; `password` sets `--requirepass`, `tls` makes its port TLS only,
    /// `arguments` adds more settings. `ports` is where its port is picked: a cluster node
    /// narrows it, since its bus listens on the port plus 10000 and that must be free too.
    package static func start(
        password: String? = nil, tls: RedisServerTLS? = nil, arguments: [String] = [],
        ports: Range<Int> = 20_000..<32_000
    ) async throws -> RedisServer {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "amodb-redis-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // Removed unless a server starts in it (`shutdown` removes it then).
        var started = false
        defer { if !started { try? FileManager.default.removeItem(at: directory) } }
        var settings = arguments
        if let password { settings += ["--requirepass", password] }
        var lastError: (any Error)?
        for _ in 0..<20 {
            let port = Int.random(in: ports)  // by default below Linux's ephemeral range (32768–60999)
            // Later settings win: TLS's replace the plain-text port with 0 (none).
            let all = settings + (tls?.arguments(port: port) ?? [])
            do {
                let process = try await RunningProcess.launch(port: port, directory: directory, settings: all)
                started = true
                return RedisServer(
                    port: port, password: password, tls: tls, directory: directory, arguments: all, process: process)
            } catch let error as StartError where error.description.contains("Address already in use") {
                lastError = error
            }
        }
        throw lastError ?? StartError(description: "no free port found")
    }

    /// Starts a sentinel (`redis-server sentinel.conf --sentinel`) monitoring `master` under
    /// `name`, with a quorum of one and failover timings short enough for a test: the
    /// master is down after `downAfter` without answering, and promotion follows at once.
    /// The master's (and its replicas') password, when it has one, is given to the sentinel
    /// (`sentinel auth-pass`).
    package static func startSentinel(
        monitoring master: RedisServer, name: String, downAfter: Duration = .milliseconds(1000)
    ) async throws -> RedisServer {
        let authPass = master.password.map { "sentinel auth-pass \(name) \($0)\n" } ?? ""
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "amodb-sentinel-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var started = false
        defer { if !started { try? FileManager.default.removeItem(at: directory) } }
        let milliseconds =
            downAfter.components.seconds * 1000 + downAfter.components.attoseconds / 1_000_000_000_000_000
        // The sentinel rewrites its file as it learns (replicas, epochs): it must be its own and writable.
        let file = directory.appendingPathComponent("sentinel.conf")
        try Data(
            """
            sentinel monitor \(name) 127.0.0.1 \(master.port) 1
            sentinel down-after-milliseconds \(name) \(milliseconds)
            sentinel failover-timeout \(name) 5000
            \(authPass)
            """.utf8
        ).write(to: file)
        var lastError: (any Error)?
        for _ in 0..<20 {
            let port = Int.random(in: 20_000..<32_000)
            do {
                let process = try await RunningProcess.launch(
                    port: port, directory: directory, settings: [], mode: .sentinel(configFile: file.path))
                started = true
                return RedisServer(
                    port: port, password: nil, tls: nil, directory: directory, arguments: [],
                    mode: .sentinel(configFile: file.path), process: process)
            } catch let error as StartError where error.description.contains("Address already in use") {
                lastError = error
            }
        }
        throw lastError ?? StartError(description: "no free port found")
    }

    /// An endpoint for this server, logged in with its password if it has one (`rediss://`
    /// when it speaks TLS).
    package var endpoint: RedisEndpoint {
        RedisEndpoint(host: "127.0.0.1", port: port, password: password.map(RedisPassword.init), usesTLS: tls != nil)
    }

    /// The URL a replica would be given for this server (password in clear: tests only).
    package var url: String {
        let credentials = password.map { ":\($0)@" } ?? ""
        return "\(tls == nil ? "redis" : "rediss")://\(credentials)127.0.0.1:\(port)"
    }

    /// A client configuration for this server, with generous timeouts for loaded test
    /// machines; `tlsFiles` (for a TLS server) defaults to trusting the CA of the
    /// certificate it serves.
    package func configuration(
        commandTimeout: Duration = .seconds(2), tlsFiles: RedisTLSFiles? = nil
    ) -> RedisConfiguration {
        var configuration = RedisConfiguration(endpoint: endpoint).withTestTimeouts(command: commandTimeout)
        configuration.tls = tlsFiles ?? RedisTLSFiles(caFile: tls?.authority.certificate)
        return configuration
    }

    /// Stops the server (SIGKILL) and waits for it to exit.
    package func stop() async {
        let process = running.withLock { current in
            defer { current = nil }
            return current
        }
        await process?.terminate()
    }

    /// Starts the server again on the same port: empty (nothing is persisted), unless a
    /// `SAVE` wrote a snapshot, which it loads; `fromSnapshot: false` removes that first.
    package func restart(fromSnapshot: Bool = true) async throws {
        await stop()
        if !fromSnapshot { try? FileManager.default.removeItem(at: directory.appendingPathComponent("dump.rdb")) }
        let process = try await RunningProcess.launch(
            port: port, directory: directory, settings: arguments, mode: mode)
        running.withLock { $0 = process }
    }

    /// Whether it runs: started and neither stopped nor shut down since (a paused server runs).
    package var isRunning: Bool { running.withLock { $0 != nil } }

    /// Its own directory (`--dir`): its snapshot, and a cluster node's `nodes.conf`, which
    /// outlive a `stop` and are read again by `restart`.
    package var directoryPath: String { directory.path }

    /// Where a `SAVE` writes its snapshot, which a restart loads.
    package var snapshotPath: String { directory.appendingPathComponent("dump.rdb").path }

    /// Freezes the server (SIGSTOP): the kernel still accepts connections, nothing answers.
    package func pause() {
        running.withLock { $0?.signal(SIGSTOP) }
    }

    /// Thaws a paused server (SIGCONT).
    package func resume() {
        running.withLock { $0?.signal(SIGCONT) }
    }

    /// Stops the server and removes its directory.
    package func shutdown() async {
        resume()
        await stop()
        try? FileManager.default.removeItem(at: directory)
    }
}

extension RedisConfiguration {
    /// This configuration with timeouts a loaded test machine keeps to: 2 s to connect, and
    /// `command` per command (the defaults, tens of milliseconds, are for a production request path).
    package func withTestTimeouts(command: Duration = .seconds(2)) -> RedisConfiguration {
        var configuration = self
        configuration.commandTimeout = command
        configuration.connectTimeout = .seconds(2)
        return configuration
    }
}

extension RedisServer: ScopedServer {}
extension RedisClient: ScopedServer {}

/// Runs `body` with a fresh server and stops it afterwards, whether `body` returns or throws.
@discardableResult
package func withRedisServer<Result>(
    password: String? = nil, tls: RedisServerTLS? = nil, arguments: [String] = [],
    _ body: (RedisServer) async throws -> Result
) async throws -> Result {
    try await withServer(try await RedisServer.start(password: password, tls: tls, arguments: arguments), body)
}

/// Runs `body` with a client for `configuration` and shuts the client down afterwards.
@discardableResult
package func withRedisClient<Result>(
    _ configuration: RedisConfiguration, _ body: (RedisClient) async throws -> Result
) async throws -> Result {
    try await withServer(RedisClient(configuration: configuration), body)
}

/// One `redis-server` process and its log.
struct RunningProcess: Sendable {
    /// A data server, or a sentinel reading (and rewriting) its own file.
    enum Mode: Sendable {
        case server
        case sentinel(configFile: String)
    }

    private let child: ChildProcess
    /// Its log (`--logfile ""` writes it to standard output; standard error joins it).
    private let log: ChildOutput

    /// Starts a server on `port` and returns once it accepts connections; throws with its log if it exits.
    static func launch(port: Int, directory: URL, settings: [String], mode: Mode = .server) async throws
        -> RunningProcess
    {
        guard let executable = RedisServer.executable else {
            throw RedisServer.StartError(description: RedisServer.notInstalledMessage)
        }
        let leading: [String]
        let readyMarker: String
        switch mode {
        case .server:
            leading = []
            readyMarker = "Ready to accept connections"
        case .sentinel(let configFile):
            leading = [configFile, "--sentinel"]
            readyMarker = "+monitor master"
        }
        let child = try ChildProcess(
            executable,
            leading + [
                "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                "--dir", directory.path, "--daemonize", "no", "--logfile", "",
            ] + settings,
            environment: ProcessInfo.processInfo.environment, standardOutput: .pipe, standardError: .standardOutput)
        let running = RunningProcess(child: child, log: child.standardOutput!)
        // Generous: a suite starts dozens of servers at once on two cores; a ready one returns at once.
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if running.log.text.contains(readyMarker) { return running }
            if let termination = child.termination {
                // All of the log, not what the drain had read when the exit was seen: it names the cause.
                let log = try await offloaded { String(decoding: running.log.readToEnd(), as: UTF8.self) }
                throw RedisServer.StartError(description: "redis-server exited (\(termination)): \(log.suffix(400))")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        await running.terminate()
        throw RedisServer.StartError(description: "redis-server did not get ready within 30 s")
    }

    /// Sends signal `number` to the server if it still runs.
    func signal(_ number: Int32) {
        child.kill(number)
    }

    /// SIGKILL (nothing is persisted, so nothing is lost), then waits for the exit.
    func terminate() async {
        child.kill(SIGCONT)
        child.kill(SIGKILL)
        _ = try? await offloaded { [child] in child.waitUntilExit() }
    }
}
