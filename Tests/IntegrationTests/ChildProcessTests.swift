import AmodbTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `ChildProcess`, the posix_spawn launcher every test that starts a program uses: what the
/// child gets (arguments, environment, directory, streams, signals, descriptors) and what the
/// parent learns (status, output).
@Suite(.timeLimit(.minutes(1)))
struct ChildProcessTests {
    @Test(arguments: [0, 1, 3, 255])
    func theExitStatusIsReported(_ status: Int32) throws {
        let child = try ChildProcess("/bin/sh", ["-c", "exit \(status)"], environment: [:])
        #expect(child.waitUntilExit() == .exited(status))
        #expect(!child.isRunning)
    }

    @Test(arguments: [SIGTERM, SIGKILL, SIGINT, SIGHUP])
    func aSignalThatEndsTheChildIsReported(_ signal: Int32) async throws {
        let child = try ChildProcess("/bin/sleep", ["30"], environment: [:])
        #expect(child.isRunning)
        child.kill(signal)
        #expect(try await offloaded { child.waitUntilExit() } == .signalled(signal))
        #expect(child.termination == .signalled(signal))
    }

    @Test(
        arguments: [
            ("nothing", [:]),
            ("two variables, one with spaces", ["AMODB_ONE": "1", "AMODB_TWO": "two words"]),
        ] as [(String, [String: String])])
    func theChildGetsExactlyTheEnvironmentGiven(_ case: String, environment: [String: String]) throws {
        let child = try ChildProcess("/usr/bin/env", environment: environment, standardOutput: .pipe)
        let printed = String(decoding: child.standardOutput?.readToEnd() ?? [], as: UTF8.self)
        #expect(child.waitUntilExit() == .exited(0))
        #expect(
            printed.split(separator: "\n").map(String.init).sorted()
                == environment.map { "\($0.key)=\($0.value)" }.sorted())
    }

    @Test func standardOutputAndStandardErrorArriveOnTheirOwnPipesLineByLine() throws {
        let child = try ChildProcess(
            "/bin/sh", ["-c", "echo one; echo problem >&2; printf 'two\\nthree'"], environment: [:],
            standardOutput: .pipe, standardError: .pipe)
        let output = try #require(child.standardOutput)
        let error = try #require(child.standardError)
        #expect(String(decoding: output.readToEnd(), as: UTF8.self) == "one\ntwo\nthree")
        #expect(output.lines == ["one", "two"], "a last line without a newline is not a line yet")
        #expect(error.readToEnd() == Array("problem\n".utf8))
        #expect(output.isFinished && error.isFinished)
        #expect(child.waitUntilExit() == .exited(0))
    }

    @Test func standardErrorCanJoinStandardOutput() throws {
        let child = try ChildProcess(
            "/bin/sh", ["-c", "echo out; echo err >&2"], environment: [:], standardOutput: .pipe,
            standardError: .standardOutput)
        #expect(child.standardError == nil)
        #expect(child.standardOutput?.readToEnd() == Array("out\nerr\n".utf8))
        #expect(child.waitUntilExit() == .exited(0))
    }

    @Test func standardInputAndOutputCanBeFilesAndAWorkingDirectoryIsEntered() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("child-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try "from a file\n".write(to: directory.appendingPathComponent("in"), atomically: true, encoding: .utf8)

        // Relative paths: the directory is entered before the streams are opened.
        let child = try ChildProcess(
            "/bin/sh", ["-c", "cat; pwd"], environment: [:], directory: directory.path,
            standardInput: .file("in"), standardOutput: .file("out"))
        #expect(child.waitUntilExit() == .exited(0))
        let written = try String(contentsOf: directory.appendingPathComponent("out"), encoding: .utf8)
        #expect(written == "from a file\n\(directory.resolvingSymlinksInPath().path)\n")
    }

    @Test(arguments: [ChildProcess.Output.null, .pipe])
    func aProgramThatCannotBeRunIsALaunchError(_ output: ChildProcess.Output) {
        #expect(throws: ChildProcess.LaunchError.self) {
            try ChildProcess(
                "/nonexistent/amodb-program", environment: [:], standardOutput: output, standardError: output)
        }
    }

    /// A child inherits its launching thread's signal mask, and test-runner threads block
    /// signals: a `redis-server` started from one never saw SIGTERM and outlived a crashed run.
    @Test func aChildLaunchedFromAThreadThatBlocksSigtermStillStopsOnSigterm() async throws {
        let child = try await offloaded {
            var blocked = sigset_t()
            sigemptyset(&blocked)
            sigaddset(&blocked, SIGTERM)
            var previous = sigset_t()
            pthread_sigmask(SIG_BLOCK, &blocked, &previous)
            defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
            return try ChildProcess("/bin/sleep", ["30"], environment: [:])
        }
        #expect(try Self.statusField("SigBlk", of: child.pid) == 0)
        child.terminate()
        #expect(try await offloaded { child.waitUntilExit() } == .signalled(SIGTERM))
    }

    /// SIGPIPE is what this process ignores (the proxy under test ignores it once at start); a
    /// child that inherited that would never die of writing to a closed pipe.
    @Test func aSignalTheParentIgnoresIsAtItsDefaultInTheChild() throws {
        signal(SIGPIPE, SIG_IGN)
        let child = try ChildProcess("/bin/sleep", ["30"], environment: [:])
        #expect(try Self.statusField("SigIgn", of: child.pid) & 1 << (UInt64(SIGPIPE) - 1) == 0)
        child.kill(SIGKILL)
        child.waitUntilExit()
    }

    @Test func aDescriptorOpenedWithoutCloseOnExecIsClosedInTheChild() throws {
        let descriptor = open("/dev/null", O_RDONLY)  // no O_CLOEXEC: Foundation-free code may open these
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let open = try Self.descriptorsOfAChild()
        #expect(!open.contains(descriptor), "the child has \(open)")
        #expect(open.isSuperset(of: [0, 1, 2]))
    }

    /// The crash this launcher replaces: Foundation's `Process.run()` read past glibc's
    /// directory buffer while listing `/proc/self/fd`, which is long when the test process
    /// holds thousands of sockets. Hold ~2,000 descriptors (none close-on-exec) and launch
    /// again and again: every launch succeeds and no child sees one of them.
    @Test func launchesWhileThousandsOfDescriptorsAreOpenSucceedAndLeakNone() throws {
        let held = 2_000
        var limit = rlimit()
        try #require(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0)
        let original = limit
        let needed = rlim_t(held + 2_048)  // room for the suites running beside this one
        if limit.rlim_cur < needed {
            try #require(limit.rlim_max >= needed, "the hard descriptor limit is below \(needed)")
            limit.rlim_cur = needed
            try #require(setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0)
        }
        defer {
            var restored = original
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &restored)
        }
        let null = open("/dev/null", O_RDONLY)
        try #require(null >= 0)
        var descriptors = [null]
        defer { descriptors.forEach { close($0) } }
        for _ in 1..<held {
            let copy = dup(null)
            try #require(copy >= 0)
            descriptors.append(copy)
        }

        for _ in 0..<200 {
            let child = try ChildProcess("/bin/true", environment: [:])
            try #require(child.waitUntilExit() == .exited(0))
        }
        let leaked = try Self.descriptorsOfAChild().intersection(descriptors).count
        #expect(leaked == 0, "the child has \(leaked) of the \(held)")
    }

    /// The descriptors open in a `/bin/sh` child, as it lists them in `/proc/<its pid>/fd`.
    private static func descriptorsOfAChild() throws -> Set<Int32> {
        let child = try ChildProcess(
            "/bin/sh", ["-c", "ls /proc/$$/fd"], environment: ["PATH": "/usr/bin:/bin"], standardOutput: .pipe)
        let listing = String(decoding: child.standardOutput?.readToEnd() ?? [], as: UTF8.self)
        #expect(child.waitUntilExit() == .exited(0))
        return Set(listing.split(separator: "\n").compactMap { Int32($0) })
    }

    /// A hexadecimal signal-set field (`SigBlk`, `SigIgn`) of `/proc/<pid>/status`.
    private static func statusField(_ name: String, of pid: Int32) throws -> UInt64 {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("\(name):") })
        return try #require(UInt64(line.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces), radix: 16))
    }
}
