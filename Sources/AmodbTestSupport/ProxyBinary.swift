public import Foundation

/// The built `amodb-proxy` executable, run as an operator or a container runtime would:
/// flags and environment in, exit status and output back. Tests of the command line go
/// through it rather than through library calls, so `main.swift` itself is exercised.
public struct ProxyBinary: Sendable {
    /// Where the executable is.
    public let path: String

    /// What a finished run left behind.
    public struct Outcome: Sendable {
        public var status: Int32
        public var standardOutput: String
        public var standardError: String
    }

    /// Why the executable could not be found or run.
    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String
    }

    /// The executable beside the test bundle (SwiftPM puts products and test bundles in one
    /// directory, and the test targets that use this depend on the executable target, so
    /// `swift test` builds it first).
    public init() throws {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var candidates = [bundle.deletingLastPathComponent()]
        // On macOS the runner is inside `…PackageTests.xctest/Contents/MacOS`.
        candidates.append(bundle.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent())
        candidates.append(URL(fileURLWithPath: Bundle.main.bundlePath).deletingLastPathComponent())
        for directory in candidates {
            let candidate = directory.appendingPathComponent("amodb-proxy").path
            if FileManager.default.isExecutableFile(atPath: candidate) {
                path = candidate
                return
            }
        }
        throw Unavailable(description: "no amodb-proxy executable beside the test bundle (\(candidates.map(\.path))); run `swift build` first")
    }

    /// Runs the executable to completion with exactly `environment` (nothing inherited) in
    /// `directory` (the temporary directory by default, so the repository's settings file
    /// is not picked up).
    public func run(_ arguments: [String], environment: [String: String] = [:], in directory: String? = nil) async throws -> Outcome {
        let process = makeProcess(arguments, environment: environment, directory: directory)
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        let running = RunningProcess(process)
        return try await offloaded {
            try ProcessLaunch.run(running.process)
            // Read both pipes to their end before waiting, so a full pipe cannot stall the child.
            let errorData = DataBox()
            let errorRead = DispatchSemaphore(value: 0)
            Thread {
                errorData.data = error.fileHandleForReading.readDataToEndOfFile()
                errorRead.signal()
            }.start()
            let outputData = output.fileHandleForReading.readDataToEndOfFile()
            running.process.waitUntilExit()
            errorRead.wait()
            return Outcome(
                status: running.process.terminationStatus, standardOutput: String(decoding: outputData, as: UTF8.self),
                standardError: String(decoding: errorData.data, as: UTF8.self))
        }
    }

    /// A `Process` for the executable, started through `/bin/sh -c "<prefix>; exec …"` when
    /// `shellPrefix` is set (to lower a limit with `ulimit` first; `exec` keeps the pid).
    public func makeProcess(_ arguments: [String], environment: [String: String], directory: String? = nil, shellPrefix: String? = nil) -> Process {
        let process = Process()
        if let shellPrefix {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", shellPrefix + #"; exec "$0" "$@""#, path] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: path)
            process.arguments = arguments
        }
        process.environment = environment
        process.currentDirectoryURL = directory.map { URL(fileURLWithPath: $0) } ?? FileManager.default.temporaryDirectory
        return process
    }
}

/// `Process` is not `Sendable`; each instance here is used by one thread at a time.
public struct RunningProcess: @unchecked Sendable {
    public let process: Process
    public init(_ process: Process) { self.process = process }
}

/// Bytes one thread reads and another takes after a semaphore says they are complete.
private final class DataBox: @unchecked Sendable {
    var data = Data()
}
