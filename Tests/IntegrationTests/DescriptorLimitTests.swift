import AmodbTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// At start the proxy raises its soft `RLIMIT_NOFILE` to the hard limit, so a low default
/// (often 1024) does not cap its connections. Checked on the built binary, started with a
/// lowered soft limit, through `/proc/<pid>/limits`.
@Suite(.timeLimit(.minutes(1)))
struct DescriptorLimitTests {
    @Test func theSoftDescriptorLimitIsRaisedToTheHardLimitAtStart() async throws {
        var limit = rlimit()
        try #require(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0)
        let hard = limit.rlim_max == rlim_t.max ? nil : UInt64(limit.rlim_max)  // RLIM_INFINITY
        try #require((hard ?? .max) > 256, "the hard limit leaves nothing to raise")

        let binary = try ProxyBinary()
        let process = try binary.launch(
            ["--sandbox"],
            environment: [
                "HOST": "127.0.0.1", "PORT": "0", "AMODB_ACCESS_LOG": "off", "AMODB_SHUTDOWN_GRACE": "1",
            ], shellPrefix: "ulimit -Sn 256", standardError: .pipe)
        let errors = try #require(process.standardError)

        // Started once it says it listens (the descriptor limit is raised before listening).
        #expect(await eventually(within: 20) { errors.text.contains("amodb-proxy listening") || !process.isRunning })
        try #require(
            errors.text.contains("amodb-proxy listening"), "the proxy did not start: \(errors.text.suffix(400))")
        let limits = try String(contentsOfFile: "/proc/\(process.pid)/limits", encoding: .utf8)
        let line = try #require(limits.split(separator: "\n").first { $0.hasPrefix("Max open files") })
        let fields = line.split(separator: " ").suffix(3)  // soft, hard, unit
        let soft = fields.first.map(String.init)
        #expect(soft == (hard.map(String.init) ?? "unlimited"), "\(line)")

        process.kill(SIGTERM)
        let termination = try await offloaded { process.waitUntilExit() }
        #expect(termination == .exited(0), "a clean exit on SIGTERM")
    }
}
