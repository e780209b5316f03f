package import AmodbClient
package import AmodbProxy
package import AmodbSandbox
package import Foundation

/// The stand-in amodb and a proxy in front of it, both in-process on port 0: what the
/// integration and hostile-input tests drive. Log lines are captured so tests can
/// assert the key never reaches them.
package final class SandboxedProxy: Sendable {
    package let sandbox: AmodbSandbox
    package let harness: ProxyHarness
    private let capture = LogCapture()
    /// The access log's lines.
    package let accessLog = LogCapture()

    /// Starts the stand-in (accepting `ProxyHarness.key` unless told otherwise) and a proxy
    /// pointed at it; `adjust` may change the proxy's configuration first.
    package init(
        sandbox configuration: AmodbSandbox.Configuration = .init(apiKey: ProxyHarness.key, requestsPerMinute: 120),
        clock: any ProxyClock = SystemClock(),
        adjust: (inout ProxyConfiguration) -> Void = { _ in }
    ) throws {
        sandbox = AmodbSandbox(configuration: configuration)
        _ = try sandbox.start()
        var proxyConfiguration = ProxyHarness.configuration(upstreamURL: sandbox.baseURL)
        proxyConfiguration.logLevel = .debug
        adjust(&proxyConfiguration)
        let logger = ProxyLogger(minimumLevel: .debug, secrets: [], sink: capture.sink)
        harness = try ProxyHarness(
            .live, configuration: proxyConfiguration, clock: clock, logger: logger, accessLog: accessLog)
    }

    /// An `AmodbClient` whose `baseURL` is the proxy, as an app would have; its timeout is
    /// generous (`eventually`'s reason: a busy machine's first crunch of tests).
    package func client(
        timeout: TimeInterval = 30,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) -> AmodbClient {
        AmodbClient(baseURL: harness.baseURL, timeout: timeout, sleep: sleep)
    }

    /// Every log line the proxy wrote (unscrubbed: the test checks what code produced).
    package var logLines: [String] { capture.all }

    package func shutdown() async {
        await harness.shutdown()
        await sandbox.shutdown()
    }
}
