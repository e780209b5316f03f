import AmodbCompression
import Foundation
import Testing

@testable import AmodbHTTP
@testable import AmodbProxy

/// A hit's head is rendered as bytes (`RenderedFields`), not as `HTTPHeaders` of Strings:
/// the bytes on the wire must be exactly those the field-by-field rendering wrote.
struct HitHeadTests {
    /// Sun, 06 Nov 1994 08:49:37 GMT (RFC 9110's example date).
    static let exampleDate = 784_111_777
    static let body = Array(#"{"page":1,"results":[]}"#.utf8)
    static let entry = CachedResponse(body: body, storedAt: 1_000, lifetime: 1800)

    /// The answer as the proxy finishes it (`Cache-Status` after the cache's own fields).
    static func answer(
        _ entry: CachedResponse = entry, at now: Double, accept: AcceptEncoding = AcceptEncoding(),
        ifNoneMatch: String? = nil
    ) -> HTTPResponse {
        let answer = entry.answer(
            at: now, outcome: .hit(ttl: entry.remainingLifetime(at: now)), accept: accept, ifNoneMatch: ifNoneMatch)
        var response = answer.response
        answer.cacheOutcome?.appendCacheStatus(to: &response.renderedFields)
        return response
    }

    static func head(_ response: HTTPResponse, isHead: Bool = false, at second: Int = exampleDate) -> String {
        String(
            decoding: ResponseSerializer.serialize(
                response, isHead: isHead, closing: false, version: .http1_1, now: second
            ).head, as: UTF8.self)
    }

    @Test func aHitIsRenderedToTheExactBytes() {
        #expect(
            Self.head(Self.answer(at: 1_005.5)) == """
                HTTP/1.1 200 OK\r
                Content-Type: application/json;charset=utf-8\r
                Vary: Accept-Encoding\r
                ETag: \(Self.entry.etag)\r
                Cache-Control: public, max-age=1795\r
                Age: 5\r
                Cache-Status: amodb-proxy; hit; ttl=1795\r
                Date: Sun, 06 Nov 1994 08:49:37 GMT\r
                Content-Length: \(Self.body.count)\r
                \r

                """)
    }

    @Test func aHitHasTheBytesTheFieldByFieldRenderingWrote() {
        let now = 1_042.0
        var fields = HTTPHeaders()
        fields.add("Content-Type", "application/json;charset=utf-8")
        fields.add("Vary", "Accept-Encoding")
        fields.add("ETag", Self.entry.etag)
        fields.add("Cache-Control", "public, max-age=1758")
        fields.add("Age", "42")
        fields.add("Cache-Status", "amodb-proxy; hit; ttl=1758")
        let asBefore = HTTPResponse(status: 200, headers: fields, body: Self.body)
        let hit = Self.answer(at: now)
        #expect(Self.head(hit) == Self.head(asBefore))
        #expect(hit.body == asBefore.body)
    }

    @Test("The per-second fields follow the clock; the others stay", arguments: [1_000.0, 1_001.9, 1_060.0, 2_799.0])
    func perSecondFieldsFollowTheClock(now: Double) {
        let age = Int(now - 1_000)
        let text = Self.head(Self.answer(at: now), at: Self.exampleDate + age)
        #expect(text.contains("\r\nCache-Control: public, max-age=\(1800 - age)\r\nAge: \(age)\r\n"))
        #expect(text.contains("\r\nCache-Status: amodb-proxy; hit; ttl=\(1800 - age)\r\n"))
        let date = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(Self.exampleDate + age)))
        let time = date.dropFirst(11).prefix(8)
        #expect(text.contains(" 1994 \(time) GMT\r\n"))
        #expect(text.contains("\r\nETag: \(Self.entry.etag)\r\nCache-Control"))
    }

    @Test(
        "A tag the client has is a 304 with the same validator and no body",
        arguments: [
            "ETAG", "W/ETAG", "*", #""other", ETAG"#, #" W/ETAG , "x""#,
        ])
    func aMatchingTagIsNotModified(ifNoneMatch: String) {
        let response = Self.answer(
            at: 1_010, ifNoneMatch: ifNoneMatch.replacingOccurrences(of: "ETAG", with: Self.entry.etag))
        #expect(response.status == 304)
        #expect(response.body.isEmpty)
        #expect(
            Self.head(response) == """
                HTTP/1.1 304 Not Modified\r
                Vary: Accept-Encoding\r
                ETag: \(Self.entry.etag)\r
                Cache-Control: public, max-age=1790\r
                Age: 10\r
                Cache-Status: amodb-proxy; hit; ttl=1790\r
                Date: Sun, 06 Nov 1994 08:49:37 GMT\r
                \r

                """)
    }

    @Test("A tag the client does not have is the whole answer", arguments: [#""nope""#, "W/\"nope\"", ""])
    func anotherTagIsTheWholeAnswer(ifNoneMatch: String) {
        let response = Self.answer(at: 1_010, ifNoneMatch: ifNoneMatch)
        #expect(response.status == 200)
        #expect(response.body == Self.body)
    }

    @Test func aHeadHasTheHeadOfTheGetAndNoBody() {
        let get = ResponseSerializer.serialize(
            Self.answer(at: 1_003), isHead: false, closing: false, version: .http1_1, now: Self.exampleDate)
        let head = ResponseSerializer.serialize(
            Self.answer(at: 1_003), isHead: true, closing: false, version: .http1_1, now: Self.exampleDate)
        #expect(head.head == get.head)
        #expect(head.body.isEmpty)
        #expect(get.body.elementsEqual(Self.body))
    }

    @Test func aCompressedVariantNamesItsCodingAndTag() throws {
        let variants = try ContentVariants(compressing: Array(repeating: UInt8(ascii: "a"), count: 4096))
        let entry = CachedResponse(body: variants.identity, storedAt: 1_000, lifetime: 1800).with(variants)
        let tags = try #require(entry.variantTags)
        var accept = AcceptEncoding()
        accept.add(fieldValue: "gzip")
        let response = Self.answer(entry, at: 1_001, accept: accept)
        #expect(response.contentEncoding == "gzip")
        #expect(
            Self.head(response) == """
                HTTP/1.1 200 OK\r
                Content-Type: application/json;charset=utf-8\r
                Vary: Accept-Encoding\r
                ETag: \(tags.gzip)\r
                Cache-Control: public, max-age=1799\r
                Age: 1\r
                Cache-Status: amodb-proxy; hit; ttl=1799\r
                Date: Sun, 06 Nov 1994 08:49:37 GMT\r
                Content-Encoding: gzip\r
                Content-Length: \(try #require(variants.gzip).count)\r
                \r

                """)
    }

    /// RFC 9110 §15.4.5: a 304 carries the validator and caching fields, nothing that
    /// describes content. The coding stays on the value, for the metrics and the log.
    @Test("A 304 for a compressed variant sends its tag and no content fields", arguments: [ContentCoding.gzip, .br])
    func aNotModifiedVariantSendsNoContentFields(coding: ContentCoding) throws {
        let variants = try ContentVariants(compressing: Array(repeating: UInt8(ascii: "a"), count: 4096))
        let entry = CachedResponse(body: variants.identity, storedAt: 1_000, lifetime: 1800).with(variants)
        let tags = try #require(entry.variantTags)
        let tag = coding == .gzip ? tags.gzip : tags.br
        var accept = AcceptEncoding()
        accept.add(fieldValue: coding.rawValue)
        let response = Self.answer(entry, at: 1_001, accept: accept, ifNoneMatch: tag)
        #expect(response.status == 304)
        #expect(response.body.isEmpty)
        #expect(response.contentEncoding == coding.contentEncoding)
        #expect(
            Self.head(response) == """
                HTTP/1.1 304 Not Modified\r
                Vary: Accept-Encoding\r
                ETag: \(tag)\r
                Cache-Control: public, max-age=1799\r
                Age: 1\r
                Cache-Status: amodb-proxy; hit; ttl=1799\r
                Date: Sun, 06 Nov 1994 08:49:37 GMT\r
                \r

                """)
        #expect(Self.head(response, isHead: true) == Self.head(response), "the same for HEAD")
    }
}
