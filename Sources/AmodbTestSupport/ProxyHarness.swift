import AmodbHTTP
package import AmodbProxy
package import Foundation

/// A proxy for a test, with its upstream and clock chosen by the test, in one of two modes
/// (Hummingbird's `.router` and `.live` are the model):
/// - **in-process** (the default): no socket, no event loop, no port; each request is handed
///   straight to the proxy's driver as a connection would hand it, and its answer is read as
///   a client reads it off the wire (serialized, then parsed). For what is a function of a
///   request: the stages, the caller, the route, the cache, the fill, the delivery.
/// - **live**: listening on port 0, asked over real connections. For what needs one: framing,
///   keep-alive, slow peers, shutdown of open connections, a real client (`baseURL`).
package final class ProxyHarness: Sendable {
    /// How the test reaches the proxy.
    package enum Mode: Sendable {
        case inProcess, live
    }

    /// The key the proxy holds; tests assert it never comes back.
    package static let key = "test-secret-key-0123456789"

    package let proxy: ProxyServer
    package let mode: Mode
    private let listeningPort: Int?

    /// Starts a proxy over `fetcher` (a scripted upstream) or the URL in `configuration`,
    /// ready to answer (snapshot loaded, `/readyz` ready).
    package init(
        _ mode: Mode = .inProcess, configuration: ProxyConfiguration = ProxyHarness.configuration(),
        fetcher: (any UpstreamFetcher)? = nil, clock: any ProxyClock = SystemClock(), logger: ProxyLogger? = nil,
        accessLog: LogCapture? = nil
    ) throws {
        self.mode = mode
        proxy = ProxyServer(
            configuration: configuration, fetcher: fetcher, clock: clock,
            logger: logger ?? ProxyLogger(minimumLevel: .error, secrets: [configuration.apiKey], sink: { _ in }),
            accessLogSink: accessLog?.sink ?? { @Sendable _ in })
        switch mode {
        case .inProcess:
            proxy.startWithoutListening()
            listeningPort = nil
        case .live:
            listeningPort = try proxy.start()
        }
    }

    /// The port a live harness listens on.
    package var port: Int {
        guard let listeningPort else { preconditionFailure("an in-process harness has no port: ask for .live") }
        return listeningPort
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

    /// One request (from `peer`, in-process; on a fresh connection, live); the response as
    /// read off the wire.
    package func get(
        _ target: String, headers: [String: String] = [:], method: String = "GET", peer: String = "127.0.0.1",
        atPort otherPort: Int? = nil
    ) async throws -> RawHTTPResponse {
        guard mode == .live else {
            var fields = HTTPHeaders()
            fields.add("Host", "127.0.0.1")
            for (name, value) in headers { fields.add(name, value) }
            let request = try HTTPRequest(method: method, target: target, headers: fields, peerAddress: peer)
            let driver = proxy.driver
            // As a connection hands it over: answered at once, or delivered later.
            let response = await withCheckedContinuation { continuation in
                let immediate = driver.respond(
                    to: request, context: ResponderContext(), later: { { continuation.resume(returning: $0) } })
                if let immediate { continuation.resume(returning: immediate) }
            }
            return try RawHTTPResponse(bytes: response.wireBytes(isHead: method == "HEAD"))
        }
        let port = otherPort ?? self.port
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
