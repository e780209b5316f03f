import AmodbCompression

/// The compressed variants in an envelope: after the body, the gzip bytes,
/// the br bytes, then their lengths (4 bytes each, big-endian; 0: none kept). The replica
/// that fills an answer compresses it once, and every replica that reads the envelope
/// serves those bytes instead of compressing the answer again.
///
/// A variant is trusted no more than the body: each must be shorter than the body and
/// decode, within the body's length, to exactly the body, or the envelope is refused like
/// a poisoned one (bytes sent to a client asking for br would otherwise be bytes that no
/// check has read). Decoding costs a small fraction of what compressing did.
///
/// gzip is read as the strictest client reads it, not as gzip(1) does: one member, a header
/// with no optional field, nothing after its trailer (`GzipFraming.plainSingleMember`),
/// which is what `ContentEncoder` writes. Two members, the first empty, are the body to
/// gzip(1) and nothing to libcurl; an optional field (a long comment, say) is read by some
/// decoders and not others. A variant framed otherwise is left out alone, and reported: the
/// body it was checked against is good, so the entry is served from it and its other
/// variants, and a client asking for gzip gets one of those.
///
/// A replica without brotli (libbrotli1 not installed) leaves a br variant out unread: it
/// cannot check it, and it offers no br of its own either.
///
/// An entry read from an envelope has its variants complete, none pending: a replica never
/// compresses what it read.
extension CacheEnvelope {
    /// The bytes at the end of a version-2 envelope that give its variants' lengths.
    static let variantTrailerSize = 8

    /// Where the body and each variant lie in an envelope.
    struct VariantSections {
        var body: Range<Int>
        var gzip: Range<Int>
        var br: Range<Int>
    }

    /// Appends `entry`'s variants, and their lengths, after its body.
    static func appendVariants(of entry: CachedResponse, to bytes: inout [UInt8]) {
        let gzip = entry.variants?.gzip ?? []
        let br = entry.variants?.br ?? []
        bytes += gzip
        bytes += br
        append(UInt64(gzip.count), width: 4, to: &bytes)
        append(UInt64(br.count), width: 4, to: &bytes)
    }

    /// Where the body (from `bodyStart`) and the variants lie in `bytes`, an envelope.
    static func variantSections(of bytes: [UInt8], bodyStart: Int) -> Result<VariantSections, EnvelopeError> {
        guard bytes.count - bodyStart >= variantTrailerSize else { return .failure(.init(reason: "cut short")) }
        let trailer = bytes.count - variantTrailerSize
        let length = { (at: Int) in bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        let gzipLength = length(trailer)
        let brLength = length(trailer + 4)
        guard trailer - bodyStart >= gzipLength + brLength else {
            return .failure(.init(reason: "its variants are longer than the value"))
        }
        let brStart = trailer - brLength
        let gzipStart = brStart - gzipLength
        return .success(VariantSections(body: bodyStart..<gzipStart, gzip: gzipStart..<brStart, br: brStart..<trailer))
    }

    /// `entry` with the variants in `sections` of `bytes`, complete, if each decodes to its
    /// body; a gzip variant that is not one plain member is left out, and `onRefusedVariant`
    /// hears why.
    static func withVariants(
        _ entry: CachedResponse, from bytes: [UInt8], _ sections: VariantSections,
        onRefusedVariant: (ContentCoding, CompressionError) -> Void
    ) -> Result<CachedResponse, EnvelopeError> {
        let body = entry.body
        // The cap is the body's length: a variant cannot make the decoder produce more.
        let decoder = ContentDecoder(maximumOutputSize: body.count, gzipFraming: .plainSingleMember)
        var found: [ContentCoding: [UInt8]] = [:]
        for (coding, range) in [(ContentCoding.gzip, sections.gzip), (.br, sections.br)] where !range.isEmpty {
            let variant = Array(bytes[range])
            let poisoned = EnvelopeError(reason: "its \(coding) variant does not decode to its body")
            do throws(CompressionError) {
                guard variant.count < body.count, try decoder.decode(variant, from: coding) == body else {
                    return .failure(poisoned)
                }
                found[coding] = variant
            } catch let error where error == .notPlainSingleMember(coding) {
                onRefusedVariant(coding, error)
            } catch let error where error == .unavailable(coding) {
                // br from a replica that has brotli, read by one that has not: this one cannot
                // check it, so it does not serve it, and serves the body and gzip as usual.
                continue
            } catch {
                return .failure(poisoned)
            }
        }
        return .success(entry.with(ContentVariants(identity: body, gzip: found[.gzip], br: found[.br])))
    }

    /// What names the answer in `envelope` whatever its variants: its bytes after the version
    /// up to the end of the ETag (key, status, stored-at, lifetime, ETag). Two envelopes of
    /// one answer, one with more variants than the other, start with the same bytes here.
    static func answerPrefix(of envelope: [UInt8]) -> [UInt8] {
        func length(at offset: Int) -> Int {
            envelope.count >= offset + 2 ? Int(envelope[offset]) << 8 | Int(envelope[offset + 1]) : 0
        }
        let etagLengthAt = 3 + length(at: 1) + 18
        let etagEnd = etagLengthAt + 2 + length(at: etagLengthAt)
        return Array(envelope[min(1, envelope.count)..<min(etagEnd, envelope.count)])
    }
}
