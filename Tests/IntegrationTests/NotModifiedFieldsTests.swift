import AmodbCompression
import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

/// A 304 (RFC 9110 §15.4.5) sends the validator and the caching fields of the 200 it
/// stands for, and nothing that describes content, for every variant and every way a 304
/// is made (a hit, a stale copy, a fill's answer, a HEAD): a client that reads
/// `Content-Encoding: gzip` on a 304 inflates its empty body and fails (axios:
/// `Z_BUF_ERROR`). Read off a raw socket, every byte the server sent.
@Suite(.timeLimit(.minutes(1)))
struct NotModifiedFieldsTests {
    static let path = "/3/trending/movie/day"
    /// Every field of such a 304, lower-cased (`connection`: the request asks to close).
    static let fields: Set<String> = ["etag", "vary", "cache-control", "date", "age", "cache-status", "connection"]

    /// A client's `Accept-Encoding`, and the coding of the variant it gets.
    struct Variant: Sendable, CustomTestStringConvertible {
        let acceptEncoding: String?
        let coding: ContentCoding
        var testDescription: String { coding.description }
        var headers: [String: String] { acceptEncoding.map { ["Accept-Encoding": $0] } ?? [:] }
    }

    static let variants = [
        Variant(acceptEncoding: nil, coding: .identity), Variant(acceptEncoding: "gzip", coding: .gzip),
        Variant(acceptEncoding: "br", coding: .br),
    ]

    /// One answer as sent: its head, and every byte the server sent after it before closing.
    struct Sent: Sendable {
        let response: RawHTTPResponse
        let after: [UInt8]
        var names: Set<String> { Set(response.headers.map { $0.name.lowercased() }) }
    }

    /// `method` for the path on a connection of its own, which the server closes after answering.
    static func send(_ port: Int, method: String = "GET", headers: [String: String]) async throws -> Sent {
        try await offloaded {
            let connection = try RawHTTPConnection(port: port)
            defer { connection.close() }
            var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            try connection.send(head + "\r\n")
            let response = try #require(try connection.readResponse(forHead: method == "HEAD"))
            return Sent(response: response, after: try connection.readUntilClosed())
        }
    }

    /// The checks every 304 here passes: exactly the fields above, the tag asked about,
    /// no content field, and not one byte after the head.
    static func expectNotModified(_ sent: Sent, tag: String, _ what: String, fields: Set<String> = fields) {
        #expect(sent.response.status == 304, "\(what)")
        #expect(sent.names == fields, "\(what): \(sent.response.headers)")
        #expect(sent.response.header("ETag") == tag, "\(what)")
        #expect(sent.response.header("Vary") == "Accept-Encoding", "\(what)")
        for name in ["Content-Encoding", "Content-Type", "Content-Length"] {
            #expect(sent.response.header(name) == nil, "\(what): \(name)")
        }
        #expect(sent.after.isEmpty, "\(what): \(sent.after.count) bytes after the head")
    }

    /// A proxy whose one answer is stored with every variant; the tag of `variant`.
    static func filled(_ harness: ProxyHarness, tagOf variant: Variant) async throws -> String {
        _ = try await harness.get(path)
        let proxy = harness.proxy
        #expect(await eventually { proxy.variantCompressions == 1 })
        let answer = try await harness.get(path, headers: variant.headers)
        #expect(answer.header("Content-Encoding") == variant.coding.contentEncoding)
        let tag = try #require(answer.header("ETag"))
        for coding in [ContentCoding.gzip, .br] {
            #expect(tag.hasSuffix("-\(coding)\"") == (coding == variant.coding), "each variant's own tag")
        }
        return tag
    }

    @Test("A hit's 304 and its HEAD's send only the validator and caching fields", arguments: variants)
    func aHitsNotModified(variant: Variant) async throws {
        let harness = try ProxyHarness(.live, fetcher: ScriptedUpstream(), clock: ManualClock())
        try await withServer(harness) { harness in
            let tag = try await Self.filled(harness, tagOf: variant)
            for method in ["GET", "HEAD"] {
                let sent = try await Self.send(
                    harness.port, method: method, headers: variant.headers.merging(["If-None-Match": tag]) { $1 })
                Self.expectNotModified(sent, tag: tag, method)
                #expect(sent.response.header("Cache-Status")?.hasPrefix("amodb-proxy; hit") == true)
            }
        }
    }

    @Test("A stale copy's 304 sends only the validator and caching fields", arguments: variants)
    func aStaleNotModified(variant: Variant) async throws {
        let clock = ManualClock()
        let fetcher = ScriptedUpstream()
        let harness = try ProxyHarness(.live, fetcher: fetcher, clock: clock)
        try await withServer(harness) { harness in
            let tag = try await Self.filled(harness, tagOf: variant)
            clock.advance(by: 1801)
            fetcher.hold()  // the refresh stays in flight: the entry stays stale
            let sent = try await Self.send(
                harness.port, headers: variant.headers.merging(["If-None-Match": tag]) { $1 })
            Self.expectNotModified(sent, tag: tag, "stale")
            #expect(sent.response.header("Cache-Status")?.contains("fwd=stale") == true)
            fetcher.release()
        }
    }

    /// The clients of a fill (the one whose request fetches, and one joined to it) are
    /// answered from the new entry: those holding its tag get a 304, in gzip as in identity,
    /// as the fill makes its gzip variant before answering.
    @Test("A fill's 304s send only the validator and caching fields", arguments: variants.filter { $0.coding != .br })
    func aFillsNotModified(variant: Variant) async throws {
        let clock = ManualClock()
        let fetcher = ScriptedUpstream()
        let harness = try ProxyHarness(.live, fetcher: fetcher, clock: clock)
        try await withServer(harness) { harness in
            let tag = try await Self.filled(harness, tagOf: variant)
            clock.advance(by: ProxyConfiguration().maxStaleSeconds + 1)  // too old to serve: fetched again
            fetcher.hold()
            let headers = variant.headers.merging(["If-None-Match": tag]) { $1 }
            let port = harness.port
            let leader = Task { try await Self.send(port, headers: headers) }
            #expect(await eventually { fetcher.heldCount == 1 })
            let joined = Task { try await Self.send(port, headers: headers) }
            #expect(await eventually { harness.proxy.statistics.value(.collapsed) == 1 })
            fetcher.release()
            Self.expectNotModified(try await leader.value, tag: tag, "the fill's leader")
            let sent = try await joined.value
            Self.expectNotModified(sent, tag: tag, "joined to the fill")
            #expect(sent.response.header("Cache-Status")?.contains("collapsed") == true)
            #expect(fetcher.calls.count == 2)
        }
    }

    @Test func aNotModifiedKeepsItsCORSFields() async throws {
        let origin = "https://app.example.com"
        try await withServer(try SandboxedProxy { $0.corsOrigins = [origin] }) { setup in
            let harness = setup.harness
            let tag = try await Self.filled(harness, tagOf: Self.variants[1])
            let sent = try await Self.send(
                harness.port, headers: ["Accept-Encoding": "gzip", "If-None-Match": tag, "Origin": origin])
            Self.expectNotModified(
                sent, tag: tag, "CORS",
                fields: Self.fields.union(["access-control-allow-origin", "access-control-expose-headers"]))
            #expect(sent.response.header("Access-Control-Allow-Origin") == origin)
        }
    }

    /// The log and the metrics count what a 304 sent: no body bytes, and the coding of the
    /// variant whose tag it confirmed.
    @Test func aNotModifiedIsLoggedWithNoBytesAndTheVariantsCoding() async throws {
        let log = LogCapture()
        let harness = try ProxyHarness(.live, fetcher: ScriptedUpstream(), clock: ManualClock(), accessLog: log)
        try await withServer(harness) { harness in
            let tag = try await Self.filled(harness, tagOf: Self.variants[1])
            let before = try await harness.metrics().value("amodb_proxy_response_bytes_total", ["encoding": "gzip"])
            let sent = try await Self.send(harness.port, headers: ["Accept-Encoding": "gzip", "If-None-Match": tag])
            #expect(sent.response.status == 304)
            #expect(await eventually { log.all.contains { $0.contains(#""status":304,"#) } })
            let line = try #require(log.all.first { $0.contains(#""status":304,"#) })
            #expect(line.contains(#""bytes":0,"encoding":"gzip""#), "\(line)")
            #expect(
                try await harness.metrics().value("amodb_proxy_response_bytes_total", ["encoding": "gzip"]) == before)
        }
    }
}
