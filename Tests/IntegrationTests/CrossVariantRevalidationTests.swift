import AmodbCompression
import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

/// `If-None-Match` naming any current variant of an entry (identity, gzip, br) is a 304
/// with that variant's tag: every variant holds the same content, so a client that stored
/// one has the answer, whichever coding it would be sent now. Without this, a client filled
/// with gzip before br was made, or that changed its `Accept-Encoding`, never revalidates.
@Suite(.timeLimit(.minutes(1)))
struct CrossVariantRevalidationTests {
    static let path = NotModifiedFieldsTests.path
    /// What Chromium and curl's `--compressed` send.
    static let browserCodings = "gzip, deflate, br"

    /// The tags of every variant, once br is made.
    static func tags(_ harness: ProxyHarness) async throws -> [ContentCoding: String] {
        var tags: [ContentCoding: String] = [:]
        for variant in NotModifiedFieldsTests.variants {
            tags[variant.coding] = try await NotModifiedFieldsTests.filled(harness, tagOf: variant)
        }
        return tags
    }

    @Test func aTagFromTheFillIsConfirmedOnceBrotliIsMade() async throws {
        let harness = try ProxyHarness(.live, fetcher: ScriptedUpstream(), clock: ManualClock())
        try await withServer(harness) { harness in
            // The fill answers with the gzip variant it made; br follows off the event loops.
            let filled = try await harness.get(Self.path, headers: ["Accept-Encoding": Self.browserCodings])
            #expect(filled.header("Content-Encoding") == "gzip")
            let gzipTag = try #require(filled.header("ETag"))
            #expect(await eventually { harness.proxy.variantCompressions == 1 })
            let now = try await harness.get(Self.path, headers: ["Accept-Encoding": Self.browserCodings])
            #expect(now.header("Content-Encoding") == "br", "br is made: a new client gets it")

            let sent = try await NotModifiedFieldsTests.send(
                harness.port, headers: ["Accept-Encoding": Self.browserCodings, "If-None-Match": gzipTag])
            NotModifiedFieldsTests.expectNotModified(sent, tag: gzipTag, "the fill's gzip tag, br made since")
        }
    }

    /// Every pair of a variant a client holds and the one its `Accept-Encoding` would get now.
    static let pairs: [(held: ContentCoding, accept: String?)] = ContentCoding.allCases.flatMap { held in
        [nil, "gzip", "br", browserCodings].map { (held, $0) }
    }

    @Test("A tag of any variant is a 304 with that tag, whatever the client accepts now", arguments: pairs)
    func anyVariantsTagIsConfirmed(held: ContentCoding, accept: String?) async throws {
        let harness = try ProxyHarness(.live, fetcher: ScriptedUpstream(), clock: ManualClock())
        try await withServer(harness) { harness in
            let tag = try #require(try await Self.tags(harness)[held])
            var headers = ["If-None-Match": tag]
            headers["Accept-Encoding"] = accept
            for method in ["GET", "HEAD"] {
                let sent = try await NotModifiedFieldsTests.send(harness.port, method: method, headers: headers)
                NotModifiedFieldsTests.expectNotModified(
                    sent, tag: tag, "\(method) holding \(held), accepting \(accept ?? "-")")
            }
        }
    }

    @Test func aListNamingSeveralVariantsConfirmsTheOneTheClientWouldGet() async throws {
        let harness = try ProxyHarness(.live, fetcher: ScriptedUpstream(), clock: ManualClock())
        try await withServer(harness) { harness in
            let tags = try await Self.tags(harness)
            let gzip = try #require(tags[.gzip])
            let br = try #require(tags[.br])
            let identity = try #require(tags[.identity])
            let list = try await NotModifiedFieldsTests.send(
                harness.port, headers: ["Accept-Encoding": "br", "If-None-Match": "\(gzip), \"other\", \(br)"])
            NotModifiedFieldsTests.expectNotModified(list, tag: br, "the negotiated variant's tag first")
            let weak = try await NotModifiedFieldsTests.send(
                harness.port, headers: ["Accept-Encoding": "br", "If-None-Match": "\"other\", W/\(identity)"])
            NotModifiedFieldsTests.expectNotModified(weak, tag: identity, "a weak comparison (RFC 9110 §13.1.2)")
            let star = try await NotModifiedFieldsTests.send(
                harness.port, headers: ["Accept-Encoding": "gzip", "If-None-Match": "*"])
            NotModifiedFieldsTests.expectNotModified(star, tag: gzip, "* names the variant the client would get")
            let none = try await harness.get(
                Self.path, headers: ["Accept-Encoding": "br", "If-None-Match": "\"other\", \"nope\""])
            #expect(none.status == 200, "a tag of no variant")
            #expect(none.header("ETag") == br)
        }
    }

    /// The 304 is logged with the coding of the variant whose tag matched.
    @Test func theLogNamesTheVariantConfirmed() async throws {
        let log = LogCapture()
        let harness = try ProxyHarness(.live, fetcher: ScriptedUpstream(), clock: ManualClock(), accessLog: log)
        try await withServer(harness) { harness in
            let gzip = try #require(try await Self.tags(harness)[.gzip])
            let sent = try await NotModifiedFieldsTests.send(
                harness.port, headers: ["Accept-Encoding": "br", "If-None-Match": gzip])
            #expect(sent.response.status == 304)
            #expect(await eventually { log.all.contains { $0.contains(#""status":304,"#) } })
            let line = try #require(log.all.first { $0.contains(#""status":304,"#) })
            #expect(line.contains(#""bytes":0,"encoding":"gzip""#), "\(line)")
        }
    }
}
