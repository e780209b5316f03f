import AmodbCompression
import AmodbModels

/// A cache entry as stored in Redis for the other replicas: one compact binary value,
/// `<prefix>cache:<key>`. Version byte, the cache key it was stored for (2-byte length,
/// then its bytes), status (2 bytes), stored-at and lifetime (8 bytes each, milliseconds,
/// big-endian), the ETag (2-byte length, then its bytes), then the body, then its
/// compressed variants (`CacheEnvelope+Variants`). Nothing else: never a request header,
/// a token or the key.
///
/// Reading trusts nothing: a value of another version, cut short, stored for another key
/// than the one asked for (a trending page copied under another page or list, whose body
/// no check could tell apart), whose ETag does not match its body, or whose variants do not
/// decode to it is refused (a gzip variant framed as no replica writes it is left out
/// alone); the entry then passes the snapshot's checks
/// (`CacheSnapshot.problem`). The earlier format (version 1) named no key, so it cannot
/// prove which path it answers: it is refused too, and the path fetched once.
enum CacheEnvelope {
    /// The format written and read: the key, the body, then its variants.
    static let version: UInt8 = 2

    /// The largest value stored for a body of `bodyBytes`: the body, and room for the fixed
    /// fields, the key and the ETag (a cache key is a request target, far below 64 KiB).
    /// Variants are smaller than the body each, so an envelope with them is at most about
    /// three times this.
    static func largestSize(bodyBytes: Int) -> Int {
        3 * bodyBytes + 64 * 1024
    }

    /// The value stored for `entry` under the cache key `key`.
    static func encode(_ entry: CachedResponse, key: String) -> [UInt8] {
        var bytes: [UInt8] = [version]
        let keyBytes = Array(key.utf8.prefix(Int(UInt16.max)))
        bytes.reserveCapacity(32 + keyBytes.count + entry.etag.utf8.count + entry.byteCount + variantTrailerSize)
        append(UInt64(keyBytes.count), width: 2, to: &bytes)
        bytes += keyBytes
        append(UInt64(UInt16(clamping: entry.status)), width: 2, to: &bytes)
        append(UInt64(bitPattern: milliseconds(entry.storedAt)), width: 8, to: &bytes)
        append(UInt64(bitPattern: milliseconds(entry.lifetime)), width: 8, to: &bytes)
        let etag = Array(entry.etag.utf8)
        append(UInt64(etag.count), width: 2, to: &bytes)
        bytes += etag
        bytes += entry.body
        appendVariants(of: entry, to: &bytes)
        return bytes
    }

    /// The entry in `bytes` if it was stored for the cache key `key`, or why it cannot be read.
    /// A variant left out of a readable entry is told to `onRefusedVariant` (`withVariants`).
    static func decode(
        _ bytes: [UInt8], key: String, onRefusedVariant: (ContentCoding, CompressionError) -> Void = { _, _ in }
    ) -> Result<CachedResponse, EnvelopeError> {
        guard bytes.first == version else { return .failure(.init(reason: "not an envelope of version \(version)")) }
        var offset = 1
        func read(_ width: Int) -> UInt64? {
            guard bytes.count - offset >= width else { return nil }
            defer { offset += width }
            return bytes[offset..<offset + width].reduce(0) { $0 << 8 | UInt64($1) }
        }
        guard let keyLength = read(2), bytes.count - offset >= Int(keyLength) else {
            return .failure(.init(reason: "cut short"))
        }
        // Compared as bytes: the key asked for is canonical, page and every parameter included.
        guard bytes[offset..<offset + Int(keyLength)].elementsEqual(key.utf8) else {
            return .failure(.init(reason: "stored for another key"))
        }
        offset += Int(keyLength)
        guard let status = read(2), let storedAt = read(8), let lifetime = read(8), let etagLength = read(2),
            bytes.count - offset >= Int(etagLength)
        else { return .failure(.init(reason: "cut short")) }
        let etag = String(decoding: bytes[offset..<offset + Int(etagLength)], as: UTF8.self)
        let sections: VariantSections
        switch variantSections(of: bytes, bodyStart: offset + Int(etagLength)) {
        case .failure(let error): return .failure(error)
        case .success(let found): sections = found
        }
        let entry = CachedResponse(
            status: Int(status), body: Array(bytes[sections.body]),
            storedAt: Double(Int64(bitPattern: storedAt)) / 1000, lifetime: Double(Int64(bitPattern: lifetime)) / 1000)
        guard entry.etag == etag else { return .failure(.init(reason: "its ETag does not match its body")) }
        return withVariants(entry, from: bytes, sections, onRefusedVariant: onRefusedVariant)
    }

    /// Why a value could not be read.
    struct EnvelopeError: Error {
        /// What is wrong with it.
        let reason: String
    }

    /// Seconds as whole milliseconds; a value no entry could have (not finite, out of range) becomes 0.
    private static func milliseconds(_ seconds: Double) -> Int64 {
        (seconds * 1000).checkedInt(.towardZero, clampedTo: 0...Int(Int64.max / 2)).map(Int64.init) ?? 0
    }

    static func append(_ value: UInt64, width: Int, to bytes: inout [UInt8]) {
        for shift in stride(from: (width - 1) * 8, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }
}
