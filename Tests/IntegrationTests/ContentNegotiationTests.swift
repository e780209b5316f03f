import AmodbCompression
import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

/// Compressed answers over the wire: each stored answer is compressed once, off
/// the event loops, and every client gets the variant its `Accept-Encoding` prefers, with
/// its own `Content-Encoding`, `ETag` and `Vary: Accept-Encoding`.
@Suite(.timeLimit(.minutes(1)))
struct ContentNegotiationTests {
    static let path = "/3/trending/movie/day"

    /// A proxy whose one answer is stored and compressed.
    static func filled(_ harness: ProxyHarness) async throws -> RawHTTPResponse {
        let first = try await harness.get(path)
        let proxy = harness.proxy
        #expect(await eventually { proxy.variantCompressions == 1 })
        return first
    }

    @Test(
        "Accept-Encoding picks the variant, and every variant decodes to the identity bytes",
        arguments: [
            (nil, ContentCoding.identity), ("gzip", .gzip), ("GZip", .gzip), ("x-gzip", .gzip), ("br", .br),
            ("gzip, deflate, br", .br), ("br;q=0.5, gzip", .gzip), ("gzip;q=0.8, br;Q=0.9", .br), ("*", .br),
            ("identity", .identity), ("deflate", .identity), ("identity;q=0, gzip", .gzip), ("br;q=0, *", .gzip),
            ("", .identity),
        ] as [(String?, ContentCoding)])
    func acceptEncodingPicksTheVariant(acceptEncoding: String?, expected: ContentCoding) async throws {
        let harness = try ProxyHarness(.live, fetcher: ScriptedUpstream(), clock: ManualClock())
        try await withServer(harness) { harness in
            let identity = try await Self.filled(harness)
            let answer = try await harness.get(
                Self.path, headers: acceptEncoding.map { ["Accept-Encoding": $0] } ?? [:])
            #expect(answer.status == 200)
            #expect(answer.header("Vary") == "Accept-Encoding")
            #expect(answer.header("Content-Encoding") == expected.contentEncoding)
            #expect(answer.header("Content-Length") == String(answer.body.count))
            let decoded = try ContentDecoder(maximumOutputSize: 1 << 20).decode(answer.body, from: expected)
            #expect(decoded == identity.body)
            if expected != .identity { #expect(answer.body.count < identity.body.count) }
        }
    }

    @Test(
        "A client that refuses every coding gets a 406 with a status_message",
        arguments: ["identity;q=0", "*;q=0", "identity;q=0, deflate"])
    func refusingEveryCodingIsNotAcceptable(acceptEncoding: String) async throws {
        let harness = try ProxyHarness(.live, fetcher: ScriptedUpstream(), clock: ManualClock())
        try await withServer(harness) { harness in
            _ = try await Self.filled(harness)
            let answer = try await harness.get(Self.path, headers: ["Accept-Encoding": acceptEncoding])
            #expect(answer.status == 406)
            #expect(answer.header("Content-Encoding") == nil)
            #expect(answer.text.contains("status_message"))
            #expect(try await harness.get(Self.path).status == 200, "the server keeps serving")
        }
    }

    /// On one keep-alive connection, a request that repeats the previous head byte for byte
    /// is answered from what was read of that head the first time (`HeadMemo`), and any other
    /// is read anew: each answer must be its own request's, whatever the order of repeats
    /// and changes (codings, a validator, an invalid query, another path).
    @Test func eachRequestOnOneConnectionGetsItsOwnAnswer() async throws {
        let harness = try ProxyHarness(.live, fetcher: ScriptedUpstream(), clock: ManualClock())
        try await withServer(harness) { harness in
            _ = try await Self.filled(harness)
            let connection = try RawHTTPConnection(port: harness.port)
            defer { connection.close() }
            func exchange(_ target: String, _ fields: String = "") throws -> RawHTTPResponse {
                try connection.send("GET \(target) HTTP/1.1\r\nHost: a\r\n\(fields)\r\n")
                return try #require(try connection.readResponse())
            }
            let gzip = try exchange(Self.path, "Accept-Encoding: gzip\r\n")
            let tag = try #require(gzip.header("ETag"))
            let steps: [(target: String, fields: String, status: Int, coding: String?)] = [
                (Self.path, "Accept-Encoding: gzip\r\n", 200, "gzip"),
                (Self.path, "Accept-Encoding: br\r\n", 200, "br"),
                (Self.path, "Accept-Encoding: br\r\n", 200, "br"),
                (Self.path, "", 200, nil),
                (Self.path, "Accept-Encoding: gzip\r\nIf-None-Match: \(tag)\r\n", 304, "gzip"),
                (Self.path, "Accept-Encoding: gzip\r\nIf-None-Match: \(tag)\r\n", 304, "gzip"),
                (Self.path, "Accept-Encoding: br\r\nIf-None-Match: \(tag)\r\n", 304, "gzip"),
                (Self.path + "?page=0", "Accept-Encoding: gzip\r\n", 400, nil),
                (Self.path + "?page=0", "Accept-Encoding: gzip\r\n", 400, nil),
                ("/3/nothing/here", "Accept-Encoding: gzip\r\n", 404, nil),
                (Self.path, "Accept-Encoding: gzip\r\n", 200, "gzip"),
            ]
            for step in steps {
                let answer = try exchange(step.target, step.fields)
                let what = "\(step.target) \(step.fields)"
                #expect(answer.status == step.status, "\(what)")
                if step.status == 200 {
                    // Each variant's own tag: the identity tag with its coding inside the quotes.
                    let etag = try #require(answer.header("ETag"))
                    #expect(etag.hasSuffix("-gzip\"") == (step.coding == "gzip"), "\(what)")
                    #expect(etag.hasSuffix("-br\"") == (step.coding == "br"), "\(what)")
                    #expect(answer.header("Content-Encoding") == step.coding, "\(what)")
                    let decoded = try ContentDecoder(maximumOutputSize: 1 << 20).decode(
                        answer.body, from: step.coding.flatMap(ContentCoding.init(contentEncoding:)) ?? .identity)
                    #expect(try JSONSerialization.jsonObject(with: Data(decoded)) is [String: Any], "\(what)")
                }
                if step.status == 304 { #expect(answer.header("ETag") == tag, "\(what)") }
                if step.status >= 400 { #expect(answer.text.contains("status_message"), "\(what)") }
            }
        }
    }

    @Test func eachVariantHasItsOwnETagAndA304ConfirmsTheOneHeld() async throws {
        let harness = try ProxyHarness(.live, fetcher: ScriptedUpstream(), clock: ManualClock())
        try await withServer(harness) { harness in
            let identity = try await Self.filled(harness)
            let identityTag = try #require(identity.header("ETag"))
            let gzip = try await harness.get(Self.path, headers: ["Accept-Encoding": "gzip"])
            let br = try await harness.get(Self.path, headers: ["Accept-Encoding": "br"])
            let gzipTag = try #require(gzip.header("ETag"))
            let brTag = try #require(br.header("ETag"))
            #expect(Set([identityTag, gzipTag, brTag]).count == 3)
            #expect(gzipTag.hasPrefix("\"") && gzipTag.hasSuffix("\"") && !gzipTag.hasPrefix("W/"), "strong tags")

            let notModified = try await harness.get(
                Self.path, headers: ["Accept-Encoding": "gzip", "If-None-Match": gzipTag])
            #expect(notModified.status == 304)
            #expect(notModified.body.isEmpty)
            #expect(notModified.header("ETag") == gzipTag)
            #expect(notModified.header("Vary") == "Accept-Encoding")
            // The gzip tag names the gzip bytes, which hold the same content as br's: a client
            // holding them that now takes br has the answer, and its own tag is confirmed.
            let otherVariant = try await harness.get(
                Self.path, headers: ["Accept-Encoding": "br", "If-None-Match": gzipTag])
            #expect(otherVariant.status == 304)
            #expect(otherVariant.header("ETag") == gzipTag)
            #expect(otherVariant.body.isEmpty)
            let changed = try await harness.get(
                Self.path, headers: ["Accept-Encoding": "br", "If-None-Match": #""0000000000000000-1""#])
            #expect(changed.status == 200)
            #expect(changed.body == br.body)
            let identityNotModified = try await harness.get(Self.path, headers: ["If-None-Match": identityTag])
            #expect(identityNotModified.status == 304)
            #expect(identityNotModified.header("Vary") == "Accept-Encoding")
        }
    }

    @Test("HEAD sends the headers GET sends for the same variant", arguments: ["gzip", "br", "identity"])
    func headSendsTheGetHeaders(acceptEncoding: String) async throws {
        let harness = try ProxyHarness(.live, fetcher: ScriptedUpstream(), clock: ManualClock())
        try await withServer(harness) { harness in
            _ = try await Self.filled(harness)
            let get = try await harness.get(Self.path, headers: ["Accept-Encoding": acceptEncoding])
            let head = try await harness.get(Self.path, headers: ["Accept-Encoding": acceptEncoding], method: "HEAD")
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
            for name in ["Content-Encoding", "Content-Length", "ETag", "Vary", "Content-Type"] {
                #expect(head.header(name) == get.header(name), "\(name)")
            }
        }
    }

    @Test func theAnswerIsCompressedOncePerFillAndIdentityUntilThen() async throws {
        let fetcher = ScriptedUpstream()
        let harness = try ProxyHarness(.live, fetcher: fetcher, clock: ManualClock())
        try await withServer(harness) { harness in
            // The miss is answered from the entry just stored, before its br variant is made
            // (its gzip is made first: `FillCompressionTests`); a client taking br alone gets identity.
            let miss = try await harness.get(Self.path, headers: ["Accept-Encoding": "br"])
            #expect(miss.header("Content-Encoding") == nil)
            #expect(miss.header("Vary") == "Accept-Encoding")
            let proxy = harness.proxy
            #expect(await eventually { proxy.variantCompressions == 1 })
            for coding in ["br", "gzip", "identity", "br", "gzip"] {
                let hit = try await harness.get(Self.path, headers: ["Accept-Encoding": coding])
                #expect(hit.header("Content-Encoding") == (coding == "identity" ? nil : coding))
            }
            #expect(proxy.variantCompressions == 1)
            #expect(fetcher.calls.count == 1)
        }
    }

    @Test func theVariantsCountInTheCachesByteBudget() throws {
        let cache = MemoryResponseCache(maxBytes: 1 << 24, shardCount: 1)
        let body = Array(ScriptedUpstream.moviePage.utf8)
        let entry = CachedResponse(body: body, storedAt: 0, lifetime: 1800)
        cache.store(entry, for: "/trending/movie/day")
        let identityOnly = cache.usage.bytes
        let variants = try ContentVariants(compressing: body)
        let gzip = try #require(variants.gzip)
        let br = try #require(variants.br)
        cache.store(entry.with(variants), for: "/trending/movie/day")
        #expect(cache.usage.bytes == identityOnly + gzip.count + br.count)
        #expect(cache.usage.entries == 1)
    }

    @Test func variantsAreRebuiltForAnswersLoadedFromASnapshot() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("variants-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = ProxyHarness.configuration()
        configuration.snapshotPath = directory + "/cache.json"
        let first = try ProxyHarness(.live, configuration: configuration, fetcher: ScriptedUpstream())
        let gzip = try await withServer(first) { harness in
            _ = try await Self.filled(harness)
            return try await harness.get(Self.path, headers: ["Accept-Encoding": "gzip"])
        }
        let fetcher = ScriptedUpstream()
        let second = try ProxyHarness(.live, configuration: configuration, fetcher: fetcher)
        try await withServer(second) { harness in
            let proxy = harness.proxy
            #expect(await eventually { proxy.variantCompressions == 1 })
            let again = try await harness.get(Self.path, headers: ["Accept-Encoding": "gzip"])
            #expect(again.header("Content-Encoding") == "gzip")
            #expect(again.header("ETag") == gzip.header("ETag"))
            #expect(again.body == gzip.body)
            #expect(fetcher.calls.isEmpty, "answered from the snapshot")
        }
    }
}
