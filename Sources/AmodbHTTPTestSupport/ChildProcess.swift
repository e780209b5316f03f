import CSystemShims
import Glibc
import Synchronization

/// A program a test starts (the proxy binary, `redis-server`, `/bin/sh`, gzip), launched with
/// posix_spawn(3) rather than Foundation's `Process`.
///
/// swift-corelibs-foundation's `Process.run()` lists `/proc/self/fd` to close descriptors in the
/// child and copies each `dirent.d_name` by value, reading past glibc's directory buffer: with
/// a long listing (thousands of sockets open in a parallel test run) that read can hit an
/// unmapped page, and the whole test runner died with SIGSEGV inside `run()`. Here the child
/// closes every descriptor above 2 itself (`posix_spawn_file_actions_addclosefrom_np`), and
/// the parent reads nothing of its own descriptor table.
///
/// The child starts with no signal blocked and every signal at its default action, whatever
/// the launching thread blocks or ignores (test-runner threads block signals, and a
/// `redis-server` that inherited a blocked SIGTERM once outlived a crashed run), and in a
/// process group of its own, as `Process` put it.
public final class ChildProcess: Sendable {
    /// Where the child's standard input comes from.
    public enum Input: Sendable, Equatable {
        /// `/dev/null`: the child reads end of file at once.
        case null
        /// The file at this path, read from its start.
        case file(String)
    }

    /// Where the child's standard output or standard error goes.
    public enum Output: Sendable, Equatable {
        /// `/dev/null`.
        case null
        /// The file at this path, created or truncated.
        case file(String)
        /// A pipe the parent drains as the child writes (`standardOutput`/`standardError`).
        case pipe
        /// For standard error only: wherever standard output goes (`2>&1`).
        case standardOutput
    }

    /// How the child ended.
    public enum Termination: Sendable, Equatable {
        /// It exited with this status.
        case exited(Int32)
        /// A signal with this number ended it.
        case signalled(Int32)

        /// The status a shell reports for it (`$?`): the exit status, or 128 plus the signal.
        public var shellStatus: Int32 {
            switch self {
            case .exited(let status): status
            case .signalled(let signal): 128 + signal
            }
        }
    }

    /// Why a child could not be started.
    public struct LaunchError: Error, CustomStringConvertible {
        /// The call that failed, the program, and the system's reason.
        public let description: String
    }

    /// The child's process id (and, as it leads its own group, its process group id).
    public let pid: Int32
    /// What the child writes to standard output, when that is `.pipe`.
    public let standardOutput: ChildOutput?
    /// What the child writes to standard error, when that is `.pipe`.
    public let standardError: ChildOutput?
    /// How it ended, once reaped; reaping and signalling happen under this lock, so a signal
    /// never reaches a reused pid.
    private let ended = Mutex<Termination?>(nil)

    /// Starts `executable` (a path; nothing is looked up on `PATH`) with `arguments` after
    /// `argv[0]`, exactly `environment` (nothing inherited), in `directory` (the parent's if nil).
    public init(
        _ executable: String, _ arguments: [String] = [], environment: [String: String], directory: String? = nil,
        standardInput: Input = .null, standardOutput: Output = .null, standardError: Output = .null
    ) throws {
        precondition(standardOutput != .standardOutput, "standard output cannot go to itself")
        var actions = posix_spawn_file_actions_t()
        try Self.check("posix_spawn_file_actions_init", executable, posix_spawn_file_actions_init(&actions))
        defer { posix_spawn_file_actions_destroy(&actions) }
        var attributes = posix_spawnattr_t()
        try Self.check("posix_spawnattr_init", executable, posix_spawnattr_init(&attributes))
        defer { posix_spawnattr_destroy(&attributes) }
        try Self.configure(&attributes, executable)

        // The directory first: later relative paths (`.file`) are then the child's.
        if let directory {
            try Self.check(
                "posix_spawn_file_actions_addchdir_np", executable, amodb_spawn_addchdir(&actions, directory))
        }
        var childEnds: [Int32] = []
        var parentEnds: [Int32] = []
        defer { for descriptor in childEnds { close(descriptor) } }
        do {
            try Self.check(
                "posix_spawn_file_actions_addopen", executable,
                {
                    switch standardInput {
                    case .null: posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
                    case .file(let path): posix_spawn_file_actions_addopen(&actions, 0, path, O_RDONLY, 0)
                    }
                }())
            var outputs: [ChildOutput?] = []
            for (descriptor, output) in [(Int32(1), standardOutput), (Int32(2), standardError)] {
                switch output {
                case .null:
                    try Self.check(
                        "posix_spawn_file_actions_addopen", executable,
                        posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", O_WRONLY, 0))
                    outputs.append(nil)
                case .file(let path):
                    try Self.check(
                        "posix_spawn_file_actions_addopen", executable,
                        posix_spawn_file_actions_addopen(
                            &actions, descriptor, path, O_WRONLY | O_CREAT | O_TRUNC, 0o644))
                    outputs.append(nil)
                case .standardOutput:
                    try Self.check(
                        "posix_spawn_file_actions_adddup2", executable,
                        posix_spawn_file_actions_adddup2(&actions, 1, descriptor))
                    outputs.append(nil)
                case .pipe:
                    // Both ends close-on-exec: the child gets the write end only as `descriptor`
                    // (dup2 clears the flag on the copy).
                    var ends: [Int32] = [-1, -1]
                    guard amodb_pipe_cloexec(&ends) == 0 else {
                        throw LaunchError(description: "pipe2 for \(executable): \(Self.reason(errno))")
                    }
                    parentEnds.append(ends[0])
                    childEnds.append(ends[1])
                    try Self.check(
                        "posix_spawn_file_actions_adddup2", executable,
                        posix_spawn_file_actions_adddup2(&actions, ends[1], descriptor))
                    outputs.append(ChildOutput(reading: ends[0]))
                }
            }
            // Every other descriptor, close-on-exec or not, stays out of the child.
            try Self.check(
                "posix_spawn_file_actions_addclosefrom_np", executable, amodb_spawn_addclosefrom(&actions, 3))

            pid = try Self.spawn(executable, arguments, environment, &actions, &attributes)
            self.standardOutput = outputs[0]
            self.standardError = outputs[1]
            outputs.compactMap { $0 }.forEach { $0.start() }
        } catch {
            for descriptor in parentEnds { close(descriptor) }
            throw error
        }
    }

    /// An empty signal mask and default actions for every signal, and a process group of its own.
    private static func configure(_ attributes: inout posix_spawnattr_t, _ executable: String) throws {
        var none = sigset_t()
        sigemptyset(&none)
        try check("posix_spawnattr_setsigmask", executable, posix_spawnattr_setsigmask(&attributes, &none))
        var every = sigset_t()
        sigfillset(&every)
        try check("posix_spawnattr_setsigdefault", executable, posix_spawnattr_setsigdefault(&attributes, &every))
        try check("posix_spawnattr_setpgroup", executable, posix_spawnattr_setpgroup(&attributes, 0))
        let flags = Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP)
        try check("posix_spawnattr_setflags", executable, posix_spawnattr_setflags(&attributes, flags))
    }

    /// posix_spawn(3) with C copies of argv and envp.
    private static func spawn(
        _ executable: String, _ arguments: [String], _ environment: [String: String],
        _ actions: inout posix_spawn_file_actions_t, _ attributes: inout posix_spawnattr_t
    ) throws -> Int32 {
        let argv = ([executable] + arguments).map { strdup($0) }
        let envp = environment.map { strdup("\($0.key)=\($0.value)") }
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        try check(
            "posix_spawn", executable, posix_spawn(&pid, executable, &actions, &attributes, argv + [nil], envp + [nil]))
        return pid
    }

    /// Throws when a posix_spawn call returned an error number (they return it, not set `errno`).
    private static func check(_ call: String, _ executable: String, _ result: Int32) throws {
        guard result == 0 else { throw LaunchError(description: "\(call) for \(executable): \(reason(result))") }
    }

    private static func reason(_ number: Int32) -> String {
        String(cString: strerror(number))
    }

    /// How it ended, or nil while it runs (never blocks).
    public var termination: Termination? {
        ended.withLock { ended in
            if ended == nil { ended = Self.reap(pid, options: WNOHANG) }
            return ended
        }
    }

    /// Whether the child has not yet ended.
    public var isRunning: Bool { termination == nil }

    /// Sends `signal` to the child unless it has already been reaped.
    public func kill(_ signal: Int32) {
        ended.withLock { ended in
            if ended == nil { _ = Glibc.kill(pid, signal) }
        }
    }

    /// Asks the child to stop (SIGTERM).
    public func terminate() {
        kill(SIGTERM)
    }

    /// Blocks until the child ends (waitid(2), no run loop) and returns how.
    @discardableResult
    public func waitUntilExit() -> Termination {
        while true {
            if let termination { return termination }
            // Wait without reaping (WNOWAIT), then reap under the lock in `termination`, so that
            // `isRunning` on another thread and this wait never both reap.
            var info = siginfo_t()
            if waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) == -1 {
                let number = errno
                if number == EINTR { continue }
                // ECHILD: another thread reaped it; `termination` holds the outcome.
                if let termination { return termination }
                preconditionFailure("waitid for child \(pid): \(Self.reason(number))")
            }
        }
    }

    /// waitpid(2), decoding the status (the W* macros do not reach Swift).
    private static func reap(_ pid: Int32, options: Int32) -> Termination? {
        var status: Int32 = 0
        var result: pid_t
        repeat { result = waitpid(pid, &status, options) } while result == -1 && errno == EINTR
        guard result == pid else { return nil }
        let signal = status & 0x7f
        return signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
    }

    /// A child still running when its handle goes is killed and reaped, so a failed test
    /// leaves neither a stray server nor a zombie behind.
    deinit {
        ended.withLock { ended in
            guard ended == nil else { return }
            _ = Glibc.kill(pid, SIGKILL)
            ended = Self.reap(pid, options: 0)
        }
    }
}
