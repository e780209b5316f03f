import AmodbCompression
import AmodbModels
import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

/// The clients of a fill (the one whose request fetches and every one joined to it) get
/// the coding they asked for, as nginx and Varnish send them: the fill makes its gzip
/// variant before it answers them, and br follows off the event loops. Until br is made,
/// a client that takes gzip as well gets gzip; one that takes br alone gets identity.
@Suite(.timeLimit(.minutes(1)))
struct FillCompressionTests {
    static let path = "/3/trending/movie/week"

    @Test func aHerdJoinedToAFillGetsGzipFromOneUpstreamCall() async throws {
        let setup = try SandboxedProxy()
        try await withServer(setup) { setup in
            let harness = setup.harness
            // amodb holds its answer until every client waits on the one call, each on a
            // connection of its own.
            setup.sandbox.hold()
            let askers: [(acceptEncoding: String?, coding: ContentCoding)] =
                Array(repeating: ("gzip", .gzip), count: 50) + [
                    (nil, .identity), ("br", .identity), ("br, gzip", .gzip),
                ]
            let answers = try await withThrowingTaskGroup(of: (Int, RawHTTPResponse).self) { group in
                for (index, asker) in askers.enumerated() {
                    group.addTask {
                        (
                            index,
                            try await harness.get(
                                Self.path, headers: asker.acceptEncoding.map { ["Accept-Encoding": $0] } ?? [:])
                        )
                    }
                }
                #expect(
                    try await eventually {
                        guard setup.sandbox.heldCount == 1 else { return false }
                        return try await harness.metrics().value(
                            "amodb_proxy_cache_events_total", ["event": "collapsed"]) == Double(askers.count - 1)
                    })
                setup.sandbox.release()
                return try await group.reduce(into: [Int: RawHTTPResponse]()) { $0[$1.0] = $1.1 }
            }
            #expect(setup.sandbox.requestCount(path: Self.path) == 1)

            var counts: [String: Int] = [:]
            for (index, asker) in askers.enumerated() {
                let answer = try #require(answers[index])
                counts[answer.header("Content-Encoding") ?? "identity", default: 0] += 1
                #expect(answer.status == 200)
                #expect(
                    answer.header("Content-Encoding") == asker.coding.contentEncoding,
                    "\(asker.acceptEncoding ?? "none")")
                #expect(answer.header("Content-Length") == String(answer.body.count))
                #expect(answer.header("Vary") == "Accept-Encoding")
            }
            #expect(counts == ["gzip": 51, "identity": 2], "\(counts)")

            // Every gzip answer is the one gzip variant of the answer, and decodes to amodb's JSON.
            let identity = try #require(answers[50])
            _ = try JSONDecoder().decode(TrendingPage.self, from: Data(identity.body))
            let gzipped = answers.values.filter { $0.header("Content-Encoding") == "gzip" }
            #expect(Set(gzipped.map(\.body)).count == 1)
            #expect(
                Set(gzipped.compactMap { $0.header("ETag") }) == [
                    try #require(identity.header("ETag")).dropLast() + "-gzip\""
                ])
            let decoded = try ContentDecoder(maximumOutputSize: 1 << 20).decode(
                try #require(gzipped.first).body, from: .gzip)
            #expect(decoded == identity.body)
            #expect(decoded.count > 2 * gzipped[0].body.count, "a 10 KB page sent as a fraction of it")

            // The cache keeps that same gzip variant, and br joins it once made.
            let proxy = harness.proxy
            #expect(await eventually { proxy.variantCompressions == 1 })
            let hit = try await harness.get(Self.path, headers: ["Accept-Encoding": "gzip"])
            #expect(hit.body == gzipped[0].body)
            #expect(hit.header("ETag") == gzipped[0].header("ETag"))
            #expect(
                try await harness.get(Self.path, headers: ["Accept-Encoding": "br"]).header("Content-Encoding") == "br")
            #expect(setup.sandbox.requestCount(path: Self.path) == 1)
        }
    }

    /// amodb's own gzip is inflated as it arrives, and the JSON is what is stored: the
    /// fill's gzip is made from the JSON, so a client decodes it once, to the JSON.
    @Test func anAnswerAmodbSentInGzipIsCompressedOnceFromItsJSON() async throws {
        let body = Array(ScriptedUpstream.movieDetails.utf8)
        let upstream = try MisbehavingUpstream(
            .respond(headers: [("Content-Encoding", "gzip")], body: Gzip.stored(body)))
        try await withServer(upstream) { (upstream: MisbehavingUpstream) async throws in
            let harness = try ProxyHarness(
                .live, configuration: ProxyHarness.configuration(upstreamURL: upstream.baseURL))
            try await withServer(harness) { harness in
                let answer = try await harness.get("/3/movie/550", headers: ["Accept-Encoding": "gzip"])
                #expect(answer.status == 200)
                #expect(answer.header("Content-Encoding") == "gzip")
                #expect(try ContentDecoder(maximumOutputSize: 1 << 20).decode(answer.body, from: .gzip) == body)
                #expect(try await harness.get("/3/movie/550").body == body, "identity is the JSON")
            }
        }
    }

    /// The queue's work is on `/metrics`: a fill's gzip made inline and its br made by one
    /// job, each counted in the bytes compressed; nothing left queued once it is done.
    @Test func theMetricsCountTheCompressionQueuesJobs() async throws {
        let body = ScriptedUpstream.largeMovieDetails(id: 550, bytes: 20_000)
        let harness = try ProxyHarness(
            .live, fetcher: ScriptedUpstream(fallback: .response(UpstreamResponse(status: 200, body: body))))
        try await withServer(harness) { harness in
            #expect(
                try await harness.get("/3/movie/550", headers: ["Accept-Encoding": "gzip"]).header("Content-Encoding")
                    == "gzip")
            #expect(
                try await eventually {
                    try await harness.metrics().value("amodb_proxy_variant_jobs_total", ["result": "made"]) == 1
                })
            let metrics = try await harness.metrics()
            #expect(try metrics.value("amodb_proxy_variant_jobs_total", ["result": "dropped"]) == 0)
            #expect(try metrics.value("amodb_proxy_variant_jobs_total", ["result": "stale"]) == 0)
            #expect(try metrics.value("amodb_proxy_variant_compressed_bytes_total") == Double(2 * body.count))
            #expect(try metrics.value("amodb_proxy_variant_queue_jobs") == 0)
            #expect(try metrics.value("amodb_proxy_variant_queue_bytes") == 0)
            #expect(
                try await harness.get("/3/movie/550", headers: ["Accept-Encoding": "br"]).header("Content-Encoding")
                    == "br")
        }
    }

    /// A large movie whose identity bytes fit the cache's largest entry but not with its
    /// variants (not even were each an eighth of it): stored and served identity, and never
    /// compressed, neither by its fill nor by the queue.
    @Test func anAnswerTheCacheCannotKeepWithItsVariantsIsNeverCompressed() async throws {
        let body = ScriptedUpstream.largeMovieDetails(id: 550, bytes: 200_000)
        var configuration = ProxyHarness.configuration()
        configuration.cacheMaxBytes = (body.count + body.count / 5) * MemoryResponseCache.maxEntryFraction
        let upstream = ScriptedUpstream(fallback: .response(UpstreamResponse(status: 200, body: body)))
        let harness = try ProxyHarness(.live, configuration: configuration, fetcher: upstream)
        try await withServer(harness) { harness in
            for _ in 0..<3 {
                let answer = try await harness.get("/3/movie/550", headers: ["Accept-Encoding": "br, gzip"])
                #expect(answer.status == 200)
                #expect(answer.header("Content-Encoding") == nil)
                let sameBytes = answer.body == body  // one Bool: a failure does not print 200 KB twice
                #expect(sameBytes)
            }
            #expect(upstream.calls.count == 1, "stored: the later answers are hits")
            // A job is queued (if at all) when the fill is stored, before its answer: it would
            // be queued, running or counted by now.
            let metrics = try await harness.metrics()
            #expect(try metrics.value("amodb_proxy_variant_queue_jobs") == 0)
            #expect(try metrics.value("amodb_proxy_variant_compressed_bytes_total") == 0)
            #expect(try metrics.value("amodb_proxy_variant_jobs_total") == 0)
        }
    }
}
