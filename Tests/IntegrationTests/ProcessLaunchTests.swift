import AmodbTestSupport
import Foundation
import Testing

/// Children the tests start (the proxy, `redis-server`) must stop when told, whatever
/// thread launched them: a child inherits its launching thread's signal mask, and test
/// runner threads block signals, so a `redis-server` started from one never saw SIGTERM
/// and outlived a crashed run.
@Suite(.timeLimit(.minutes(1)))
struct ProcessLaunchTests {
    @Test func aChildLaunchedFromAThreadThatBlocksSigtermStillStopsOnSigterm() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sleep")
        process.arguments = ["30"]
        try await offloaded {
            var blocked = sigset_t()
            sigemptyset(&blocked)
            sigaddset(&blocked, SIGTERM)
            var previous = sigset_t()
            pthread_sigmask(SIG_BLOCK, &blocked, &previous)
            defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
            try ProcessLaunch.run(process)
        }
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        kill(process.processIdentifier, SIGTERM)
        #expect(await eventually(within: 10) { !process.isRunning })
        #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGTERM)
    }
}
