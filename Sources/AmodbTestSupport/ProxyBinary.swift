import Foundation

/// The built `amodb-proxy` executable, run as an operator or a container runtime would:
/// flags and environment in, exit status and output back. Tests of the command line go
/// through it rather than through library calls, so `main.swift` itself is exercised.
package struct ProxyBinary: Sendable {
    /// Where the executable is.
    package let path: String

    /// What a finished run left behind.
    package struct Outcome: Sendable {
        package var status: Int32
        package var standardOutput: String
        package var standardError: String
    }

    /// Why the executable could not be found or run.
    package struct Unavailable: Error, CustomStringConvertible {
        package let description: String
    }

    /// The executable beside the test bundle (SwiftPM puts products and test bundles in one
    /// directory, and the test targets that use this depend on the executable target, so
    /// `swift test` builds it first).
    package init() throws {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var candidates = [bundle.deletingLastPathComponent()]
        // On macOS the runner is inside `…PackageTests.xctest/Contents/MacOS`.
        candidates.append(
            bundle.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent())
        candidates.append(URL(fileURLWithPath: Bundle.main.bundlePath).deletingLastPathComponent())
        for directory in candidates {
            let candidate = directory.appendingPathComponent("amodb-proxy").path
            if FileManager.default.isExecutableFile(atPath: candidate) {
                path = candidate
                return
            }
        }
        throw Unavailable(
            description:
                "no amodb-proxy executable beside the test bundle (\(candidates.map(\.path))); run `swift build` first")
    }

    /// Runs the executable to completion with exactly `environment` (nothing inherited) in
    /// `directory` (the temporary directory by default, so the repository's settings file
    /// is not picked up).
    package func run(_ arguments: [String], environment: [String: String] = [:], in directory: String? = nil)
        async throws -> Outcome
    {
        let child = try launch(
            arguments, environment: environment, directory: directory, standardOutput: .pipe, standardError: .pipe)
        // Both pipes are drained as the child writes, so neither can fill up and stall it;
        // both are read to their end before the wait (blocking, hence offloaded).
        return try await offloaded {
            let output = child.standardOutput?.readToEnd() ?? []
            let error = child.standardError?.readToEnd() ?? []
            let status = child.waitUntilExit().shellStatus
            return Outcome(
                status: status, standardOutput: String(decoding: output, as: UTF8.self),
                standardError: String(decoding: error, as: UTF8.self))
        }
    }

    /// Starts the executable with exactly `environment` in `directory` (the temporary directory
    /// by default), through `/bin/sh -c "<prefix>; exec …"` when `shellPrefix` is set (to lower
    /// a limit with `ulimit` first; `exec` keeps the pid).
    package func launch(
        _ arguments: [String], environment: [String: String], directory: String? = nil, shellPrefix: String? = nil,
        standardOutput: ChildProcess.Output = .null, standardError: ChildProcess.Output = .null
    ) throws -> ChildProcess {
        let (executable, argv) =
            shellPrefix.map { ("/bin/sh", ["-c", $0 + #"; exec "$0" "$@""#, path] + arguments) } ?? (path, arguments)
        return try ChildProcess(
            executable, argv, environment: environment,
            directory: directory ?? FileManager.default.temporaryDirectory.path,
            standardOutput: standardOutput, standardError: standardError)
    }
}
