import AmodbCompression
import AmodbTestSupport
import CZlib
import Testing

@testable import AmodbProxy

/// A gzip variant read from Redis is kept only as replicas write it: one member, a header
/// with no optional field, nothing after its trailer, decoding to exactly the body. Any
/// other framing reads as the body to gzip(1) but as something else (often nothing) to
/// clients that read one member; such a variant is left out, and the entry kept with its
/// body and its other variants.
struct EnvelopeVariantStrictnessTests {
    static let key = "/movie/550"
    /// Long enough that an 8 KB comment still leaves the variant shorter than the body.
    static let body = ScriptedUpstream.largeMovieDetails(id: 550, bytes: 40_000)

    /// `member` with FLG set to `flags` and `fields` after its fixed 10-byte header.
    static func header(of member: [UInt8], flags: UInt8, fields: [UInt8]) -> [UInt8] {
        var fixed = Array(member[..<10])
        fixed[3] = flags
        return fixed + fields + member[10...]
    }

    /// The body's gzip from the proxy's encoder, framed in each way a replica never writes.
    static func forgeries() throws -> [(String, [UInt8])] {
        let member = try ContentEncoder().encode(body, as: .gzip)
        var withHeaderCRC = Array(member[..<10])
        withHeaderCRC[3] = 0x02
        let crc = withHeaderCRC.withUnsafeBufferPointer { crc32(0, $0.baseAddress, uInt($0.count)) }
        withHeaderCRC += [UInt8(truncatingIfNeeded: crc), UInt8(truncatingIfNeeded: crc >> 8)] + member[10...]
        return [
            ("two members, the first empty", try ContentEncoder().encode([], as: .gzip) + member),
            ("an 8 KB FCOMMENT", header(of: member, flags: 0x10, fields: [UInt8](repeating: 0x61, count: 8192) + [0])),
            ("an FNAME", header(of: member, flags: 0x08, fields: Array("answer.json".utf8) + [0])),
            ("an FEXTRA", header(of: member, flags: 0x04, fields: [4, 0, 0x41, 0x50, 0, 0])),
            ("an FHCRC", withHeaderCRC),
            ("bytes after the trailer", member + Array("{\"junk\":1}".utf8)),
        ]
    }

    static func envelope(gzip: [UInt8]?, br: [UInt8]?) -> (CachedResponse, [UInt8]) {
        let entry = CachedResponse(body: body, storedAt: 1_700_000_000, lifetime: 1800)
        return (entry, CacheEnvelope.encode(entry.with(ContentVariants(identity: body, gzip: gzip, br: br)), key: key))
    }

    @Test func aGzipVariantFramedOtherwiseThanAsOnePlainMemberIsLeftOutAndTheEntryKept() throws {
        let br = try ContentEncoder().encode(Self.body, as: .br)
        for (label, forged) in try Self.forgeries() {
            #expect(forged.count < Self.body.count, "\(label)")
            let (entry, envelope) = Self.envelope(gzip: forged, br: br)
            var refused: [ContentCoding] = []
            let read = CacheEnvelope.decode(envelope, key: Self.key) { coding, _ in refused.append(coding) }
            guard case .success(let kept) = read else {
                Issue.record("\(label): the whole envelope was refused, not the variant alone")
                continue
            }
            #expect(kept.body == Self.body, "\(label)")
            #expect(kept.etag == entry.etag, "\(label)")
            #expect(kept.variants?.gzip == nil, "\(label): the variant is left out")
            #expect(kept.variants?.br == br, "\(label): the other variant is kept")
            #expect(kept.variants?.available == [.identity, .br], "\(label)")
            #expect(refused == [.gzip], "\(label): the caller hears of it")
        }
    }

    /// What replicas write passes, byte for byte, and nothing is reported.
    @Test func theEncodersVariantsAreKeptAsTheyAre() throws {
        let variants = try ContentVariants(compressing: Self.body)
        let (_, envelope) = Self.envelope(gzip: variants.gzip, br: variants.br)
        var refused: [ContentCoding] = []
        let kept = try CacheEnvelope.decode(envelope, key: Self.key) { coding, _ in refused.append(coding) }.get()
        #expect(kept.variants?.gzip == variants.gzip)
        #expect(kept.variants?.br == variants.br)
        #expect(refused.isEmpty)
    }

    /// A plain member of other content is a poisoned envelope, refused whole as before: only
    /// a framing no replica writes costs the variant alone.
    @Test func aPlainGzipVariantOfAnotherBodyStillRefusesTheEnvelope() throws {
        var other = Self.body
        other[other.count - 30] = UInt8(ascii: "y")
        let (_, envelope) = Self.envelope(gzip: try ContentEncoder().encode(other, as: .gzip), br: nil)
        guard case .failure(let error) = CacheEnvelope.decode(envelope, key: Self.key) else {
            Issue.record("an envelope whose gzip variant is another body was read")
            return
        }
        #expect(error.reason == "its gzip variant does not decode to its body")
    }
}
