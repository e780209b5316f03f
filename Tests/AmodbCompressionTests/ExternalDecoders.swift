import AmodbHTTPTestSupport
import Foundation

/// Decoders outside this code base, to show the encoders' output is what other
/// software reads: gzip(1), and python3's `brotli` module when it is installed.
enum ExternalDecoders {
    /// The first python3 that can `import brotli`: the one on PATH (perhaps pyenv's),
    /// else Debian's, where the python3-brotli package puts the module.
    static let pythonWithBrotli: String? = ["python3", "/usr/bin/python3"].first { python in
        (try? run([python, "-c", "import brotli"], input: []).status) == 0
    }

    /// Whether some python3 here has the `brotli` module.
    static var pythonBrotliIsAvailable: Bool { pythonWithBrotli != nil }

    /// `gzip -dc`: the bytes gzip(1) decodes from `input`.
    static func gunzip(_ input: [UInt8]) throws -> [UInt8] {
        try checked(run(["gzip", "-dc"], input: input), "gzip -dc")
    }

    /// `gzip -9 -n -c`: gzip(1)'s own best compression, for comparison.
    static func gzipBest(_ input: [UInt8]) throws -> [UInt8] {
        try checked(run(["gzip", "-9", "-n", "-c"], input: input), "gzip -9")
    }

    /// python3's `brotli.decompress` of `input`.
    static func pythonBrotliDecompress(_ input: [UInt8]) throws -> [UInt8] {
        let script = "import brotli, sys; sys.stdout.buffer.write(brotli.decompress(sys.stdin.buffer.read()))"
        guard let python = pythonWithBrotli else { throw Failure(description: "no python3 with brotli") }
        return try checked(run([python, "-c", script], input: input), "python3 brotli")
    }

    /// A tool's exit status and output.
    struct Outcome {
        var status: Int32
        var output: [UInt8]
    }

    /// The tool did not exit 0.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private static func checked(_ outcome: Outcome, _ tool: String) throws -> [UInt8] {
        guard outcome.status == 0 else { throw Failure(description: "\(tool) exited \(outcome.status)") }
        return outcome.output
    }

    /// Runs `arguments` (found on PATH) with `input` as a file on stdin, so that no
    /// pipe can fill up while the tool waits for the rest of its input.
    private static func run(_ arguments: [String], input: [UInt8]) throws -> Outcome {
        let inputURL = FileManager.default.temporaryDirectory
            .appendingPathComponent("amodb-compression-\(UUID().uuidString)")
        try Data(input).write(to: inputURL)
        defer { try? FileManager.default.removeItem(at: inputURL) }
        // `env` finds the tool on this process's PATH, which the child is given with the rest
        // of the environment.
        let child = try ChildProcess(
            "/usr/bin/env", arguments, environment: ProcessInfo.processInfo.environment,
            standardInput: .file(inputURL.path), standardOutput: .pipe)
        let bytes = child.standardOutput?.readToEnd() ?? []
        let status = child.waitUntilExit().shellStatus
        return Outcome(status: status, output: bytes)
    }
}
