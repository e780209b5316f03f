import AmodbClient
import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

/// What the proxy sends in each coding is counted (`amodb_proxy_response_bytes_total`,
/// the access log's `encoding`), and `AmodbClient` over URLSession gets a compressed
/// answer and decodes it without being told.
@Suite(.timeLimit(.minutes(1)))
struct CompressedClientTests {
    static let path = "/3/trending/movie/day"

    @Test(
        "Bytes sent are counted per encoding, in the metric and the access log", arguments: ["gzip", "br", "identity"])
    func bytesAreCountedPerEncoding(coding: String) async throws {
        let log = LogCapture()
        let harness = try ProxyHarness(.live, fetcher: ScriptedUpstream(), clock: ManualClock(), accessLog: log)
        try await withServer(harness) { harness in
            _ = try await harness.get(Self.path)
            let proxy = harness.proxy
            #expect(await eventually { proxy.variantCompressions == 1 })
            let scrape = try await harness.get("/metrics")
            let before = try PrometheusSamples(scrape.text)
            let answer = try await harness.get(Self.path, headers: ["Accept-Encoding": coding])
            let after = try await harness.metrics()
            let sent =
                try after.value("amodb_proxy_response_bytes_total", ["encoding": coding])
                - before.value("amodb_proxy_response_bytes_total", ["encoding": coding])
            // The first scrape is itself an identity answer, counted once it was rendered.
            let scraped = coding == "identity" ? scrape.body.count : 0
            #expect(sent == Double(answer.body.count + scraped))
            #expect(
                await eventually {
                    log.all.contains { $0.contains(#""bytes":\#(answer.body.count),"encoding":"\#(coding)""#) }
                })
        }
    }

    @Test func amodbClientGetsACompressedAnswerAndDecodesIt() async throws {
        let log = LogCapture()
        let harness = try ProxyHarness(.live, fetcher: ScriptedUpstream(), clock: ManualClock(), accessLog: log)
        try await withServer(harness) { harness in
            let client = AmodbClient(baseURL: harness.baseURL, timeout: 30)
            _ = try await client.trending(.movie, .day)
            let proxy = harness.proxy
            #expect(await eventually { proxy.variantCompressions == 1 })
            let page = try await client.trending(.movie, .day)
            #expect(page.results.first?.id == 550)
            let metrics = try await harness.metrics()
            let compressed =
                try metrics.value("amodb_proxy_response_bytes_total", ["encoding": "br"])
                + metrics.value("amodb_proxy_response_bytes_total", ["encoding": "gzip"])
            #expect(compressed > 0, "a compressed variant went over the wire")
            #expect(log.all.contains { $0.contains(#""encoding":"br""#) || $0.contains(#""encoding":"gzip""#) })
        }
    }
}
