import AmodbTestSupport
import Foundation
import Testing

/// The built `amodb-proxy` binary, as an operator runs it: in sandbox mode on port 0,
/// its port read from its own "listening" log line.
@Suite(.timeLimit(.minutes(1)))
struct SignalTests {
    /// A running `amodb-proxy` whose standard error the test reads.
    private struct RunningProxy: Sendable {
        let process: ChildProcess

        init(arguments: [String], environment: [String: String]) throws {
            process = try ProxyBinary().launch(arguments, environment: environment, standardError: .pipe)
        }

        /// The JSON event lines so far.
        var events: [[String: String]] {
            (process.standardError?.lines ?? []).compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String]
            }
        }

        /// The port in the "amodb-proxy listening" line, once it is written.
        var port: Int? {
            events.first { $0["message"] == "amodb-proxy listening" }?["address"]
                .flatMap { $0.split(separator: ":").last }.flatMap { Int($0) }
        }

        func stop() {
            process.terminate()
            process.waitUntilExit()
        }
    }

    /// The main thread parks in `sigwait`, not in `dispatchMain()` (which valgrind cannot
    /// follow): SIGTERM, SIGINT and SIGHUP are blocked in every thread, so only `sigwait`
    /// takes them, and SIGTERM still ends the proxy cleanly.
    @Test func everyThreadBlocksTheHandledSignalsAndSigtermStillStopsTheProxy() async throws {
        let proxy = try RunningProxy(
            arguments: ["--sandbox"], environment: ["HOST": "127.0.0.1", "PORT": "0", "AMODB_ACCESS_LOG": "off"])
        defer { proxy.stop() }
        #expect(await eventually(within: 20) { proxy.port != nil })
        let pid = proxy.process.pid
        let threads = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")
        #expect(threads.count > 1)
        // Bits 0, 1 and 14 of SigBlk: SIGHUP (1), SIGINT (2), SIGTERM (15). The main thread
        // (its id is the pid) shows them unblocked while the kernel waits in `sigwait` for them.
        let wanted: UInt64 = 1 << 0 | 1 << 1 | 1 << 14
        for thread in threads where thread != "\(pid)" {
            let status = try String(contentsOfFile: "/proc/\(pid)/task/\(thread)/status", encoding: .utf8)
            let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("SigBlk:") })
            let blocked = try #require(
                UInt64(line.dropFirst("SigBlk:".count).trimmingCharacters(in: .whitespaces), radix: 16))
            #expect(blocked & wanted == wanted, "thread \(thread) blocks \(String(blocked, radix: 16))")
        }
        #if arch(x86_64)
            // The main thread waits in rt_sigtimedwait (128), what `sigwait` calls; `dispatchMain()` parks it in rt_sigsuspend (130).
            let call = try String(contentsOfFile: "/proc/\(pid)/task/\(pid)/syscall", encoding: .utf8)
            #expect(call.hasPrefix("128 "), "the main thread is in \(call.prefix(12))")
        #endif
        proxy.process.kill(SIGTERM)
        #expect(await eventually(within: 20) { !proxy.process.isRunning })
        #expect(proxy.process.termination == .exited(0))
        #expect(proxy.events.contains { $0["message"] == "stopped" })
    }

    @Test func sighupReloadsTheLogLevelAndTheTokensAndTheProxyKeepsServing() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hup-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let settings = directory.appendingPathComponent("amodb-proxy.conf").path
        let tokens = directory.appendingPathComponent("tokens").path
        try "AMODB_LOG_LEVEL=info\n".write(toFile: settings, atomically: true, encoding: .utf8)
        try "first-token\n".write(toFile: tokens, atomically: true, encoding: .utf8)

        let proxy = try RunningProxy(
            arguments: ["--sandbox", "--config", settings, "--tokens-file", tokens],
            environment: ["HOST": "127.0.0.1", "PORT": "0", "AMODB_ACCESS_LOG": "off"])
        defer { proxy.stop() }
        #expect(await eventually(within: 20) { proxy.port != nil })
        let port = try #require(proxy.port)

        try "AMODB_LOG_LEVEL=debug\n".write(toFile: settings, atomically: true, encoding: .utf8)
        try "first-token\nsecond-token\n".write(toFile: tokens, atomically: true, encoding: .utf8)
        proxy.process.kill(SIGHUP)

        #expect(
            await eventually(within: 30) {
                proxy.events.contains { $0["message"]?.hasPrefix("SIGHUP: reloaded") == true }
            })
        let reload = try #require(proxy.events.first { $0["message"]?.hasPrefix("SIGHUP: reloaded") == true })
        #expect(reload["log_level"] == "debug")
        #expect(reload["previous_log_level"] == "info")
        #expect(reload["client_tokens"] == "2")
        #expect(proxy.process.isRunning)

        let health = try await offloaded {
            let connection = try RawHTTPConnection(port: port, timeout: 10)
            defer { connection.close() }
            try connection.send(
                "GET /3/trending/movie/week HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer second-token\r\n\r\n")
            return try connection.readResponse()?.status
        }
        #expect(health == 200, "still serving, with the token added before the signal")

        proxy.process.terminate()
        #expect(await eventually(within: 20) { !proxy.process.isRunning })
        #expect(proxy.process.termination == .exited(0))
    }
}
