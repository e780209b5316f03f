package import AmodbCompression
import AmodbHTTP
import AmodbModels

/// One stored amodb answer: its status (200, or 404 kept as a negative entry), the body
/// exactly as amodb sent it, when it was stored and for how long it is fresh.
///
/// Its parts live in one immutable object: a hit copies an entry out of the cache and
/// passes it along, and each copy is then one reference, not one per array and string.
package struct CachedResponse: Sendable, Equatable {
    /// The parts, set once.
    private final class Parts: Sendable {
        let status: Int
        let body: [UInt8]
        let storedAt: Double
        let lifetime: Double
        let etag: String
        let variants: ContentVariants?
        let variantTags: (gzip: String, br: String)?
        /// The lifetime in whole seconds, as `Cache-Control: max-age` counts it.
        let lifetimeSeconds: Int
        /// How each coding is answered (`Form`): identity always, the others once made.
        let identity: Form
        let gzip: Form?
        let br: Form?

        init(
            status: Int, body: [UInt8], storedAt: Double, lifetime: Double, etag: String,
            variants: ContentVariants?, variantTags: (gzip: String, br: String)?
        ) {
            self.status = status
            self.body = body
            self.storedAt = storedAt
            self.lifetime = lifetime
            self.etag = etag
            self.variants = variants
            self.variantTags = variantTags
            lifetimeSeconds = lifetime.checkedInt(.towardZero, clampedTo: CachedResponse.secondsRange) ?? 0
            identity = Form(coding: .identity, body: body, tag: status == 200 ? etag : nil)
            gzip = variants?.gzip.flatMap { bytes in
                variantTags.map { Form(coding: .gzip, body: bytes, tag: status == 200 ? $0.gzip : nil) }
            }
            br = variants?.br.flatMap { bytes in
                variantTags.map { Form(coding: .br, body: bytes, tag: status == 200 ? $0.br : nil) }
            }
        }

        /// What `read` makes of the form answered in `coding` (identity when that coding
        /// was not made), lent where it is stored: returning a copy would retain and
        /// release each of its buffers and strings on every hit.
        func withForm<Result>(_ coding: ContentCoding, _ read: (borrowing Form) -> Result) -> Result {
            switch coding {
            case .identity: return read(identity)
            case .gzip: if let gzip { return read(gzip) }
            case .br: if let br { return read(br) }
            }
            return read(identity)
        }
    }

    /// What every answer of an entry in one coding sends, whatever its age: the bytes, the
    /// tag, and the fields that never change (`Content-Type`, `Vary`, `ETag`) rendered once,
    /// so that a hit writes only its two per-second fields.
    struct Form: Sendable {
        let coding: ContentCoding
        let body: [UInt8]
        /// The strong tag of these bytes, for a 200 (`If-None-Match` is matched against it).
        let tag: String?
        /// `Content-Type`, `Vary` and (with a tag) `ETag`, as lines; a 304 sends them from
        /// `afterContentType` on, as it has no body.
        let fields: [UInt8]

        init(coding: ContentCoding, body: [UInt8], tag: String?) {
            self.coding = coding
            self.body = body
            self.tag = tag
            var fields = RenderedFields()
            fields.append { lines in
                lines.write(Form.contentType)
                lines.write("Vary: Accept-Encoding\r\n")
                if let tag { lines.line("ETag", tag) }
            }
            self.fields = fields.bytes
        }

        static let contentType: StaticString = "Content-Type: application/json;charset=utf-8\r\n"

        /// The fields a 304 sends: all but `Content-Type`.
        var afterContentType: Int { Form.contentType.utf8CodeUnitCount }
    }

    /// What `read` makes of the form answered in `coding` (identity when that coding was
    /// not made), lent, not copied.
    func withForm<Result>(_ coding: ContentCoding, _ read: (borrowing Form) -> Result) -> Result {
        parts.withForm(coding, read)
    }

    private let parts: Parts

    /// The strong tag of the variant in `coding`, if that variant was made and the entry is
    /// a 200 (a negative entry has none). Unlike `withForm`, no fallback to identity: a
    /// coding not made has no tag a client could hold.
    func tag(of coding: ContentCoding) -> String? {
        switch coding {
        case .identity: parts.identity.tag
        case .gzip: parts.gzip?.tag
        case .br: parts.br?.tag
        }
    }

    /// 200, or 404 for a negative entry (a movie amodb does not have).
    package var status: Int { parts.status }
    /// The JSON body.
    package var body: [UInt8] { parts.body }
    /// When it was stored, in seconds since 1970.
    package var storedAt: Double { parts.storedAt }
    /// How long it is fresh, in seconds.
    package var lifetime: Double { parts.lifetime }
    /// A strong `ETag` (RFC 9110 §8.8.3), derived from the body.
    package var etag: String { parts.etag }
    /// The body compressed in gzip and br (`VariantMaker`): a fill makes gzip before anyone
    /// is answered from it, and br is made off the event loops once the entry is stored (both
    /// there, for an entry loaded from a snapshot or too long to gzip at once). Until a
    /// coding is made, a client that asks for it gets the best of those made (identity at least).
    package var variants: ContentVariants? { parts.variants }
    /// The strong tags of the gzip and br variants: the identity tag with the coding
    /// appended inside the quotes, made once here so that a hit does no String work.
    var variantTags: (gzip: String, br: String)? { parts.variantTags }

    /// An entry stored `storedAt` (seconds since 1970), fresh for `lifetime` seconds.
    package init(status: Int = 200, body: [UInt8], storedAt: Double, lifetime: Double) {
        parts = Parts(
            status: status, body: body, storedAt: storedAt, lifetime: lifetime, etag: Self.entityTag(for: body),
            variants: nil, variantTags: nil)
    }

    /// This entry with its variants, which must hold this body as their identity bytes.
    package func with(_ variants: ContentVariants) -> CachedResponse {
        CachedResponse(self, variants: variants)
    }

    private init(_ entry: CachedResponse, variants: ContentVariants) {
        let open = entry.etag.dropLast()
        // The variants' identity bytes are the body, in a buffer of their own size: the
        // entry keeps one copy of them, not the body as it was read beside it.
        parts = Parts(
            status: entry.status, body: variants.identity, storedAt: entry.storedAt, lifetime: entry.lifetime,
            etag: entry.etag,
            variants: variants, variantTags: (open + "-gzip\"", open + "-br\""))
    }

    /// Whether `other` is this same stored answer (variants aside): the same body stored
    /// at the same time.
    func isSameAnswer(as other: CachedResponse) -> Bool {
        storedAt == other.storedAt && status == other.status && etag == other.etag
    }

    /// What it costs in the cache's byte budget: every variant's bytes.
    package var byteCount: Int {
        variants?.byteCount ?? body.count
    }

    /// Equal entries: the same answer, stored at the same time, with the same variants.
    package static func == (lhs: CachedResponse, rhs: CachedResponse) -> Bool {
        lhs.status == rhs.status && lhs.body == rhs.body && lhs.storedAt == rhs.storedAt
            && lhs.lifetime == rhs.lifetime && lhs.variants == rhs.variants
    }

    /// Whole seconds since it was stored (the `Age` field, RFC 9111 §5.1).
    /// Checked: `storedAt` may come from a snapshot on disk, so no value can trap.
    package func age(at now: Double) -> Int {
        (now - storedAt).checkedInt(.towardZero, clampedTo: Self.secondsRange) ?? 0
    }

    /// Whole seconds of freshness left (`max-age` for clients), negative once stale
    /// (as RFC 9211's `ttl`). `Age` plus this is always the lifetime.
    package func remainingLifetime(at now: Double) -> Int {
        remainingLifetime(age: age(at: now))
    }

    /// Whole seconds of freshness left at `age` (from `age(at:)`, read once per answer).
    func remainingLifetime(age: Int) -> Int {
        parts.lifetimeSeconds - age
    }

    /// Ages and lifetimes are read within about 68 years, so their difference never overflows.
    static let secondsRange = 0...Int(Int32.max)

    /// Fresh: younger than its lifetime.
    package func isFresh(at now: Double) -> Bool {
        now - storedAt < lifetime
    }

    /// 64-bit FNV-1a of the body and its length, quoted.
    static func entityTag(for body: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in body {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return "\"" + String(repeating: "0", count: 16 - hex.count) + hex + "-" + String(body.count, radix: 16) + "\""
    }
}
