import AmodbHTTP
package import AmodbProxy

/// A proxy assembled in-process whose requests are handed straight to its responder, as a
/// connection would hand them, and whose answers are read as a client would read them off
/// the wire (serialized, then parsed): no socket, no event loop, no port. For the tests of
/// what is a function of a request (the stages: caller, route, cache decision, fill,
/// commit, deliver); what needs a connection (framing, keep-alive, shutdown of open
/// connections, a real client) uses `ProxyHarness`. Hummingbird's `.router` test mode is
/// the model.
package final class InProcessProxy: Sendable {
    /// The key the proxy holds; tests assert it never comes back.
    package static let key = ProxyHarness.key

    package let proxy: ProxyServer

    /// A proxy over `fetcher` (a scripted upstream) or the URL in `configuration`, ready to
    /// answer (snapshot loaded, `/readyz` ready), as `ProxyHarness` starts one.
    package init(
        configuration: ProxyConfiguration = ProxyHarness.configuration(), fetcher: (any UpstreamFetcher)? = nil,
        clock: any ProxyClock = SystemClock(), logger: ProxyLogger? = nil, accessLog: LogCapture? = nil
    ) {
        proxy = ProxyServer(
            configuration: configuration, fetcher: fetcher, clock: clock,
            logger: logger ?? ProxyLogger(minimumLevel: .error, secrets: [configuration.apiKey], sink: { _ in }),
            accessLogSink: accessLog?.sink ?? { @Sendable _ in })
        proxy.startWithoutListening()
    }

    /// The answer to one request for `target` from `peer`, as a client reads it.
    package func get(
        _ target: String, headers: [String: String] = [:], method: String = "GET", peer: String = "127.0.0.1"
    ) async throws -> RawHTTPResponse {
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
