import AmodbProxy
import AmodbTestSupport
import Dispatch
import Foundation
import Testing

private let mebibyte = 1024 * 1024

/// A proxy in front of the same upstreams: what the apps see.
@Suite(.timeLimit(.minutes(1)))
struct ProxyUpstreamMisbehaviourTests {
    private func proxy(_ upstream: MisbehavingUpstream, adjust: (inout ProxyConfiguration) -> Void = { _ in }) throws
        -> ProxyHarness
    {
        var configuration = ProxyHarness.configuration(upstreamURL: upstream.baseURL)
        configuration.maxUpstreamBytes = mebibyte
        adjust(&configuration)
        return try ProxyHarness(.live, configuration: configuration)
    }

    @Test func aDrippingUpstreamGets504AtTheTimeoutAndLaterClientsWaitNoLonger() async throws {
        // 190 bytes at one every 0.25 s: the body would take 47 s, the timeout is 6 s (the
        // second client must join within it, on a machine that may be busy).
        let upstream = try MisbehavingUpstream(
            .drip(prefix: Array(#"{"id":550,"#.utf8), interval: 0.25, declaredLength: 200))
        try await withServer(upstream) { (upstream: MisbehavingUpstream) async throws in
            try await withServer(try proxy(upstream) { $0.upstreamTimeout = 6 }) {
                (harness: ProxyHarness) async throws in
                let start = DispatchTime.now()
                async let first = { () async throws -> (RawHTTPResponse, Double) in
                    let response = try await harness.get("/3/movie/550")
                    return (response, seconds(since: start))
                }()
                #expect(await eventually { upstream.requests.count == 1 && upstream.bytesSent > 12 })
                let joined = seconds(since: start)
                let second = try await harness.get("/3/movie/550")
                let secondDone = seconds(since: start)
                let (firstResponse, firstDone) = try await first
                let timings = "joined at \(joined) s, second answered at \(secondDone) s, first at \(firstDone) s"
                #expect(firstResponse.status == 504)
                #expect(second.status == 504)
                #expect(second.text.contains("status_message"))
                #expect(second.header("Cache-Status")?.contains("collapsed") == true)
                #expect(joined >= 0.5, "the second client joined while bytes were dripping")
                // The 6 s deadline, not the 47 s drip: most of the body was never sent.
                #expect(firstDone >= 5.9, "\(timings)")
                #expect(upstream.bytesSent < 150, "\(upstream.bytesSent) of 200 bytes dripped")
                // collapsed onto the first call (above): answered with it
                #expect(secondDone <= firstDone + 5, "\(timings)")
                #expect(upstream.requests.count == 1)
            }
        }
    }

    @Test(arguments: ["bomb", "huge"])
    func anOversizedBodyIs502AndNotStored(_ kind: String) async throws {
        let behaviour: MisbehavingUpstream.Behaviour =
            kind == "bomb"
            ? .respond(headers: [("Content-Encoding", "gzip")], body: Gzip.zeros(4 * mebibyte))
            : .stream(length: 8 * mebibyte)
        try await withServer(try MisbehavingUpstream(behaviour)) { (upstream: MisbehavingUpstream) async throws in
            try await withServer(try proxy(upstream)) { (harness: ProxyHarness) async throws in
                let response = try await harness.get("/3/movie/550")
                #expect(response.status == 502)
                #expect(response.text.contains("larger than the proxy accepts"))
                #expect(harness.proxy.cache.usage.entries == 0)
                #expect(harness.proxy.cache.usage.bytes == 0)
                let metrics = try PrometheusSamples(try await harness.get("/metrics").text)
                #expect(try metrics.value("amodb_proxy_upstream_requests_total", ["status": "too_large"]) == 1)
            }
        }
    }

    @Test func aBodyWithTheKeyInJSONEscapesIs502AndNotStored() async throws {
        let escaped = ProxyHarness.key.unicodeScalars.map { "\\u" + String(format: "%04x", $0.value) }.joined()
        let body = #"{"id":550,"title":"Fight Club","overview":"\#(escaped)"}"#
        try await withServer(try MisbehavingUpstream(.respond(body: Array(body.utf8)))) {
            (upstream: MisbehavingUpstream) async throws in
            try await withServer(try proxy(upstream)) { (harness: ProxyHarness) async throws in
                let response = try await harness.get("/3/movie/550")
                #expect(response.status == 502)
                #expect(!response.text.contains(escaped))
                #expect(!response.text.contains(ProxyHarness.key))
                #expect(harness.proxy.cache.usage.entries == 0)
            }
        }
    }

    @Test func aGzipAnswerIsServedDecodedAndStored() async throws {
        let body = ScriptedUpstream.movieDetails
        let upstream = try MisbehavingUpstream(
            .respond(headers: [("Content-Encoding", "gzip")], body: Gzip.stored(Array(body.utf8))))
        try await withServer(upstream) { (upstream: MisbehavingUpstream) async throws in
            try await withServer(try proxy(upstream)) { (harness: ProxyHarness) async throws in
                let response = try await harness.get("/3/movie/550")
                #expect(response.status == 200)
                #expect(response.text == body)
                #expect(response.header("Content-Encoding") == nil)
                #expect(
                    try await harness.get("/3/movie/550").header("Cache-Status")?.hasPrefix("amodb-proxy; hit") == true)
            }
        }
    }
}
