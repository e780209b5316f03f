import AmodbProxy
import AmodbTestSupport
import Testing

/// A gzip body from amodb that does not decode is an unusable answer, like a truncated
/// one: 502 for the client, nothing stored, and its bytes never passed on.
@Suite(.timeLimit(.minutes(1)))
struct CorruptGzipUpstreamTests {
    static let body = Array(ScriptedUpstream.movieDetails.utf8)

    /// Ways a gzip body can fail to decode.
    static let corruptions: [(String, [UInt8])] = {
        let good = Gzip.stored(body)
        var badCRC = good
        badCRC[badCRC.count - 6] ^= 0xFF  // the CRC-32 in the trailer
        var badDeflate = good
        badDeflate[10] = 0x07  // a reserved deflate block type
        return [
            ("a gzip header and then garbage", Array(good.prefix(10)) + Array(repeating: 0xA5, count: 64)),
            ("a stream cut short", Array(good.prefix(good.count / 2))),
            ("a wrong CRC", badCRC),
            ("a reserved block type", badDeflate),
            ("no gzip at all", body),
        ]
    }()

    @Test("A gzip body that does not decode is a 502 and is not stored", arguments: corruptions)
    func aCorruptGzipBodyIsUnusable(_ name: String, bytes: [UInt8]) async throws {
        let upstream = try MisbehavingUpstream(.respond(headers: [("Content-Encoding", "gzip")], body: bytes))
        try await withServer(upstream) { (upstream: MisbehavingUpstream) async throws in
            let harness = try ProxyHarness(
                .live, configuration: ProxyHarness.configuration(upstreamURL: upstream.baseURL))
            try await withServer(harness) { (harness: ProxyHarness) async throws in
                let response = try await harness.get("/3/movie/550", headers: ["Accept-Encoding": "gzip"])
                #expect(response.status == 502, "\(name): \(response.text)")
                #expect(response.text.contains("status_message"))
                #expect(response.header("Content-Encoding") == nil)
                #expect(harness.proxy.cache.usage.entries == 0)
            }
        }
    }
}
