package import AmodbProxy
package import Foundation

/// A proxy started in-process on port 0 for a test, with its upstream and clock
/// chosen by the test.
package final class ProxyHarness: Sendable {
    /// The key the proxy holds; tests assert it never comes back.
    package static let key = "test-secret-key-0123456789"

    package let proxy: ProxyServer
    package let port: Int

    /// Starts a proxy over `fetcher` (a scripted upstream) or the URL in `configuration`.
    package init(
        configuration: ProxyConfiguration = ProxyHarness.configuration(), fetcher: (any UpstreamFetcher)? = nil,
        clock: any ProxyClock = SystemClock(), logger: ProxyLogger? = nil, accessLog: LogCapture? = nil
    ) throws {
        proxy = ProxyServer(
            configuration: configuration, fetcher: fetcher, clock: clock,
            logger: logger ?? ProxyLogger(minimumLevel: .error, secrets: [configuration.apiKey], sink: { _ in }),
            accessLogSink: accessLog?.sink ?? { @Sendable _ in })
        port = try proxy.start()
    }

    /// A configuration for tests: loopback, port 0, the test key, short grace period,
    /// no per-client rate limit; then `adjust` applied, for the settings a test is about.
    package static func configuration(
        upstreamURL: String = "http://127.0.0.1:9/3", _ adjust: (inout ProxyConfiguration) -> Void = { _ in }
    ) -> ProxyConfiguration {
        var configuration = ProxyConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.apiKey = Secret(key)
        configuration.upstreamURL = upstreamURL
        configuration.shutdownGraceSeconds = 0.5
        configuration.clientRateLimit = 0  // tests of the per-client limit turn it on
        adjust(&configuration)
        return configuration
    }

    /// `http://127.0.0.1:<port>/3`, what an app puts in its `baseURL`.
    package var baseURL: URL { URL(string: "http://127.0.0.1:\(port)/3")! }

    /// One request on a fresh connection; the response as read off the wire.
    package func get(_ target: String, headers: [String: String] = [:], method: String = "GET") async throws
        -> RawHTTPResponse
    {
        let port = self.port
        return try await offloaded {
            let connection = try RawHTTPConnection(port: port, timeout: 30)
            var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            try connection.send(head + "\r\n")
            guard let response = try connection.readResponse(forHead: method == "HEAD") else {
                throw RawHTTPError.closedMidResponse(received: 0)
            }
            return response
        }
    }

    /// A `POST` of `body` (`Content-Length`, JSON) on a fresh connection.
    package func post(_ target: String, body: [UInt8], headers: [String: String] = [:]) async throws -> RawHTTPResponse
    {
        let port = self.port
        return try await offloaded {
            let connection = try RawHTTPConnection(port: port, timeout: 30)
            var head = "POST \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            head += "Content-Length: \(body.count)\r\n"
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            try connection.send(Array((head + "\r\n").utf8) + body)
            guard let response = try connection.readResponse() else {
                throw RawHTTPError.closedMidResponse(received: 0)
            }
            return response
        }
    }

    /// Raw bytes on a fresh connection; every response until the server closes or goes quiet.
    package func exchange(_ bytes: [UInt8], expecting count: Int, timeout: Double = 5) async throws -> (
        responses: [RawHTTPResponse], closed: Bool
    ) {
        let port = self.port
        return try await offloaded {
            let connection = try RawHTTPConnection(port: port, timeout: timeout)
            try connection.send(bytes)
            var responses: [RawHTTPResponse] = []
            while responses.count < count, let response = try connection.readResponse() { responses.append(response) }
            return (responses, connection.waitForClose(seconds: 1))
        }
    }

    /// `GET /metrics`, parsed as a scraper would read it.
    package func metrics() async throws -> PrometheusSamples {
        let response = try await get("/metrics")
        guard response.status == 200 else { throw RawHTTPError.malformed("/metrics answered \(response.status)") }
        return try PrometheusSamples(response.text)
    }

    /// Stops the proxy (see `ProxyServer.shutdown()`).
    package func shutdown() async {
        await proxy.shutdown()
    }
}
