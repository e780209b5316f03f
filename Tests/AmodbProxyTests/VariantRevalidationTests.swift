import AmodbCompression
import Foundation
import Testing

@testable import AmodbHTTP
@testable import AmodbProxy

/// `If-None-Match` against an entry with variants: a tag of any variant it has is a 304
/// with that tag and no content fields; the variant the client would be sent is preferred
/// when several are named; a tag of a coding not made, or of nothing, is the whole answer.
struct VariantRevalidationTests {
    static let variants = try! ContentVariants(compressing: Array(repeating: UInt8(ascii: "a"), count: 4096))
    static let entry = CachedResponse(body: variants.identity, storedAt: 1_000, lifetime: 1800).with(variants)

    static func accept(_ value: String?) -> AcceptEncoding {
        var accept = AcceptEncoding()
        if let value { accept.add(fieldValue: value) }
        return accept
    }

    static func tag(_ coding: ContentCoding) -> String {
        entry.tag(of: coding)!
    }

    @Test(
        "Any variant's tag is confirmed, whatever the client would be sent",
        arguments: ContentCoding.allCases, [nil, "gzip", "br", "gzip, deflate, br"])
    func anyVariantsTagIsConfirmed(held: ContentCoding, accept: String?) {
        let answer = Self.entry.answer(
            at: 1_001, outcome: .hit(ttl: 1799), accept: Self.accept(accept), ifNoneMatch: Self.tag(held))
        #expect(answer.response.status == 304)
        #expect(answer.response.body.isEmpty)
        #expect(answer.response.contentEncoding == held.contentEncoding, "the log names the variant confirmed")
        let head = HitHeadTests.head(answer.response)
        #expect(head.contains("ETag: \(Self.tag(held))\r\n"))
        #expect(head.contains("Vary: Accept-Encoding\r\n"))
        for name in ["Content-Type", "Content-Encoding", "Content-Length"] {
            #expect(!head.contains(name), "\(name)")
        }
    }

    @Test func theVariantTheClientWouldGetIsPreferred() {
        let list = "\(Self.tag(.identity)), \(Self.tag(.gzip)), \(Self.tag(.br))"
        for (accept, coding) in [(nil, ContentCoding.identity), ("gzip", .gzip), ("br", .br)] {
            let answer = Self.entry.answer(
                at: 1_001, outcome: .hit(ttl: 1799), accept: Self.accept(accept), ifNoneMatch: list)
            #expect(answer.response.contentEncoding == coding.contentEncoding, "\(accept ?? "none")")
            #expect(HitHeadTests.head(answer.response).contains("ETag: \(Self.tag(coding))\r\n"))
        }
        let star = Self.entry.answer(
            at: 1_001, outcome: .hit(ttl: 1799), accept: Self.accept("br"), ifNoneMatch: "*")
        #expect(star.response.status == 304)
        #expect(star.response.contentEncoding == "br")
    }

    @Test func aTagOfACodingNotMadeIsTheWholeAnswer() {
        let fill = CachedResponse(body: Self.variants.identity, storedAt: 1_000, lifetime: 1800)
            .with(ContentVariants(identity: Self.variants.identity, gzip: Self.variants.gzip, br: nil))
        #expect(fill.tag(of: .br) == nil)
        let answer = fill.answer(
            at: 1_001, outcome: .hit(ttl: 1799), accept: Self.accept("br"), ifNoneMatch: Self.tag(.br))
        #expect(answer.response.status == 200)
        #expect(answer.response.contentEncoding == nil, "br alone, not made yet: identity")
    }

    @Test func aNegativeEntryIsNeverNotModified() {
        let missing = CachedResponse(status: 404, body: Array(#"{"x":1}"#.utf8), storedAt: 1_000, lifetime: 300)
        #expect(missing.tag(of: .identity) == nil)
        for ifNoneMatch in ["*", missing.etag] {
            let answer = missing.answer(at: 1_001, outcome: .hit(ttl: 299), ifNoneMatch: ifNoneMatch)
            #expect(answer.response.status == 404)
        }
    }

    @Test(
        "If-None-Match is read as a list of tags, compared weakly",
        arguments: [
            (#""abc""#, true), (#"W/"abc""#, true), (#" "x" ,"abc" "#, true), (#""x",,W/"abc""#, true),
            ("*", true), (#""x", *"#, true), (#""abcd""#, false), (#"abc"#, false), (#"w/"abc""#, false),
            ("", false), (",", false), (#"W/"#, false), (#""ab""#, false),
        ])
    func ifNoneMatchIsReadAsAList(_ ifNoneMatch: String, _ matches: Bool) {
        #expect(ConditionalRequest.matches(ifNoneMatch, etag: #""abc""#) == matches)
    }
}
