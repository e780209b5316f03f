import AmodbBytes

/// A client's `Accept-Encoding` (RFC 9110 §12.5.3), read as a pure value: built from
/// the field values (the field may appear more than once) and asked which coding of
/// an answer to send.
///
/// It runs on every cache hit, so it reads the bytes of the field values in place and
/// keeps what it learns in a few integers: no Foundation, no allocation.
///
/// - Weights are q-values from 0 to 1 with up to three decimals (RFC 9110 §12.4.2).
///   A member whose weight or syntax is malformed counts as absent; it never throws.
/// - Names compare case-insensitively; `x-gzip` means gzip (§8.4.1.3); `*` stands for
///   any coding not listed by name; codings the proxy does not make are ignored.
/// - A coding listed twice (in one field or across several) takes its highest weight:
///   anywhere the client says it accepts a coding, it does.
/// - Identity is acceptable unless refused by `identity;q=0`, or by `*;q=0` without
///   identity listed; left unlisted it ranks below every coding the client named.
/// - At equal weights br wins, then gzip, then identity (the smaller answer).
/// - No field at all, or an empty one, means identity.
public struct AcceptEncoding: Sendable, Hashable {
    /// Whether an `Accept-Encoding` field was present, even an empty one.
    private var isPresent = false
    /// Weights in thousandths (0...1000) of the members named; `nil` if not named.
    private var brWeight: UInt16?
    private var gzipWeight: UInt16?
    private var identityWeight: UInt16?
    private var anyWeight: UInt16?

    /// A request without `Accept-Encoding`: identity.
    public init() {}

    /// A request whose `Accept-Encoding` fields have these values, in order.
    public init(fieldValues: [String]) {
        for value in fieldValues {
            add(fieldValue: value)
        }
    }

    /// A request whose header fields (every field, in order) are `fields`: the values of its
    /// `Accept-Encoding` fields, found by name without case, are read as by `init(fieldValues:)`.
    /// Runs for every hit: the names are compared as bytes, with no list of values built.
    public init(fields: [(name: String, value: String)]) {
        for index in fields.indices where Self.isFieldName(fields[index].name) {
            add(fieldValue: fields[index].value)
        }
    }

    /// Whether a field name is `Accept-Encoding`, in any case.
    static func isFieldName(_ name: String) -> Bool {
        // The usual spelling first: equality of a short string compares two words.
        if name == "Accept-Encoding" { return true }
        guard name.utf8.count == 15 else { return false }
        return ASCIIBytes.equalsIgnoringCase(name.utf8.span, 0, 15, "accept-encoding")
    }

    /// Adds one `Accept-Encoding` field value (a comma-separated list of members).
    public mutating func add(fieldValue: String) {
        parse(fieldValue.utf8.span)
    }

    /// Adds one `Accept-Encoding` field value given as its bytes.
    public mutating func add(fieldValue: [UInt8]) {
        parse(fieldValue.span)
    }

    /// Which coding to send, among those the answer has (`available`).
    ///
    /// Without the field, identity (RFC 9110 §12.5.3 allows any coding then, but a
    /// client that says nothing may not decode one); should the answer have no
    /// identity bytes, its preferred variant.
    public func negotiate(available: ContentCodingSet = .all) -> EncodingChoice {
        guard isPresent else {
            if available.contains(.identity) { return .send(.identity) }
            return ContentCoding.preferenceOrder.first(where: available.contains).map(EncodingChoice.send)
                ?? .notAcceptable
        }
        var best: (coding: ContentCoding, rank: Int)?
        for coding in ContentCoding.preferenceOrder where available.contains(coding) {
            guard let rank = rank(of: coding) else { continue }
            // At equal weights the earlier (preferred) coding stays.
            if let current = best, rank <= current.rank { continue }
            best = (coding, rank)
        }
        return best.map { .send($0.coding) } ?? .notAcceptable
    }

    /// How much the client wants `coding`: its weight in thousandths, 0 for identity
    /// left unlisted (acceptable, below anything named), `nil` if not acceptable.
    private func rank(of coding: ContentCoding) -> Int? {
        let named: UInt16? =
            switch coding {
            case .br: brWeight
            case .gzip: gzipWeight
            case .identity: identityWeight
            }
        if let weight = named ?? anyWeight {
            return weight > 0 ? Int(weight) : nil
        }
        return coding == .identity ? 0 : nil
    }

    // MARK: Parsing

    /// The codings a member can name that matter here.
    private enum Name {
        case br, gzip, identity, any, other
    }

    /// Reads one field value: members split at commas, empty ones skipped (§5.6.1).
    private mutating func parse(_ bytes: Span<UInt8>) {
        isPresent = true
        var start = 0
        while start <= bytes.count {
            var end = start
            while end < bytes.count, bytes[end] != ASCII.comma {
                end += 1
            }
            addMember(bytes, start, end)
            start = end + 1
        }
    }

    /// Reads `codings [ OWS ";" OWS "q=" qvalue ]` from `bytes[start..<end]`; anything
    /// else there (another parameter, a quoted or out-of-range q) leaves it out.
    private mutating func addMember(_ bytes: Span<UInt8>, _ start: Int, _ end: Int) {
        var low = start
        var high = end
        while low < high, ASCIIBytes.isWhitespace(bytes[low]) { low += 1 }
        while high > low, ASCIIBytes.isWhitespace(bytes[high - 1]) { high -= 1 }
        guard low < high else { return }
        var cursor = low
        while cursor < high, ASCIIBytes.isToken(bytes[cursor]) { cursor += 1 }
        guard cursor > low else { return }
        let name = Self.name(bytes, low, cursor)
        while cursor < high, ASCIIBytes.isWhitespace(bytes[cursor]) { cursor += 1 }
        var weight: UInt16 = 1000
        if cursor < high {
            guard bytes[cursor] == ASCII.semicolon else { return }
            cursor += 1
            while cursor < high, ASCIIBytes.isWhitespace(bytes[cursor]) { cursor += 1 }
            guard high - cursor >= 2, ASCIIBytes.lowercased(bytes[cursor]) == ASCII.q,
                bytes[cursor + 1] == ASCII.equals,
                let parsed = Self.qValue(bytes, cursor + 2, high)
            else { return }
            weight = parsed
        }
        switch name {
        case .br: brWeight = max(brWeight ?? 0, weight)
        case .gzip: gzipWeight = max(gzipWeight ?? 0, weight)
        case .identity: identityWeight = max(identityWeight ?? 0, weight)
        case .any: anyWeight = max(anyWeight ?? 0, weight)
        case .other: break
        }
    }

    /// `qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )` (RFC 9110 §12.4.2)
    /// in thousandths, or `nil` if `bytes[start..<end]` is not one.
    private static func qValue(_ bytes: Span<UInt8>, _ start: Int, _ end: Int) -> UInt16? {
        let length = end - start
        guard length >= 1, length <= 5 else { return nil }
        let unit = bytes[start]
        guard unit == ASCII.zero || unit == ASCII.one else { return nil }
        var thousandths: UInt16 = 0
        if length > 1 {
            guard bytes[start + 1] == ASCII.dot else { return nil }
            var scale: UInt16 = 100
            for index in (start + 2)..<end {
                let digit = bytes[index] &- ASCII.zero
                guard digit <= 9 else { return nil }
                thousandths += UInt16(digit) * scale
                scale /= 10
            }
        }
        if unit == ASCII.one {
            return thousandths == 0 ? 1000 : nil
        }
        return thousandths
    }

    /// Which coding `bytes[start..<end]` names, ignoring case.
    private static func name(_ bytes: Span<UInt8>, _ start: Int, _ end: Int) -> Name {
        if ASCIIBytes.equalsIgnoringCase(bytes, start, end, "br") { return .br }
        if ASCIIBytes.equalsIgnoringCase(bytes, start, end, "gzip") { return .gzip }
        if ASCIIBytes.equalsIgnoringCase(bytes, start, end, "x-gzip") { return .gzip }
        if ASCIIBytes.equalsIgnoringCase(bytes, start, end, "identity") { return .identity }
        if end - start == 1, bytes[start] == ASCII.star { return .any }
        return .other
    }
}
