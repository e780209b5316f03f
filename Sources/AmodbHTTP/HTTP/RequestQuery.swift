import AmodbBytes

/// A request's query (what follows `?` in the target), as the client sent it, already
/// checked: every `%XX` escape is well formed, nothing decodes to a control byte, and each
/// name and value decodes to valid UTF-8. It is a slice of the target's string: reading a
/// request copies nothing for its query.
///
/// Items are `name=value` pairs split on `&` (empty pieces skipped), `+` is a space, and a
/// piece without `=` is a name with an empty value (the HTML form encoding apps use).
/// `forEachItem` hands them out decoded as bytes, with no `String` made; `items` decodes
/// them into strings, for code that is not on a hot path.
public struct RequestQuery: Sendable {
    /// The query's text as sent, without the `?`.
    public let text: Substring

    /// No query.
    public init() {
        text = ""
    }

    /// A query that `isValid` accepted.
    init(checked text: Substring) {
        self.text = text
    }

    /// A query from its text as sent (without the `?`); `nil` when `isValid` refuses it.
    public init?(_ text: Substring) {
        guard Self.isValid(text.utf8.span) else { return nil }
        self.text = text
    }

    /// Whether the query has no items.
    public var isEmpty: Bool { text.utf8.allSatisfy { $0 == UInt8(ascii: "&") } }

    /// Calls `body` with each item's name and value, decoded, in order. The bytes are valid
    /// only during the call (a piece with an escape or a `+` is decoded into a scratch
    /// buffer; one without is passed as it stands).
    public func forEachItem<Failure: Error>(
        _ body: (_ name: Span<UInt8>, _ value: Span<UInt8>) throws(Failure) -> Void
    ) throws(Failure) {
        try Self.forEachItem(in: text.utf8.span, body)
    }

    /// `forEachItem` over the query's bytes.
    private static func forEachItem<Failure: Error>(
        in bytes: Span<UInt8>,
        _ body: (_ name: Span<UInt8>, _ value: Span<UInt8>) throws(Failure) -> Void
    ) throws(Failure) {
        var start = 0
        while start < bytes.count {
            var end = start
            var equals = -1
            var encoded = false
            while end < bytes.count, bytes[end] != ampersand {
                let byte = bytes[end]
                if byte == UInt8(ascii: "="), equals < 0 { equals = end }
                if byte == UInt8(ascii: "%") || byte == UInt8(ascii: "+") { encoded = true }
                end += 1
            }
            if end > start {
                let nameEnd = equals < 0 ? end : equals
                let valueStart = equals < 0 ? end : equals + 1
                let name = bytes.extracting(start..<nameEnd)
                let value = bytes.extracting(valueStart..<end)
                if encoded {
                    try decoded(name) { (name) throws(Failure) in
                        try decoded(value) { (value) throws(Failure) in try body(name, value) }
                    }
                } else {
                    try body(name, value)
                }
            }
            start = end + 1
        }
    }

    /// The items, decoded into strings.
    public var items: [(name: String, value: String)] {
        var items: [(name: String, value: String)] = []
        forEachItem { name, value in
            items.append((name.decodedString(), value.decodedString()))
        }
        return items
    }

    /// The first value of an item, decoded.
    public func value(of name: String) -> String? {
        var found: String?
        forEachItem { itemName, value in
            if found == nil, itemName.elementsEqual(name.utf8) { found = value.decodedString() }
        }
        return found
    }

    /// Whether a query's bytes are one this type holds: escapes well formed, no control byte once decoded, each name and value
    /// valid UTF-8 once decoded. One pass over the bytes; only a query with an escape above
    /// 0x7F decodes its pieces to check their UTF-8.
    static func isValid(_ bytes: Span<UInt8>) -> Bool {
        var index = 0
        var nonASCII = false
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, let high = RequestTarget.hexValue(bytes[index + 1]),
                    let low = RequestTarget.hexValue(bytes[index + 2])
                else { return false }
                let byte = high << 4 | low
                if byte < 0x20 || byte == 0x7F { return false }
                if byte >= 0x80 { nonASCII = true }
                index += 3
            } else {
                let byte = bytes[index]
                if byte < 0x20 || byte == 0x7F { return false }
                if byte >= 0x80 { nonASCII = true }
                index += 1
            }
        }
        guard nonASCII else { return true }
        // Each name and value alone must be UTF-8: a sequence split by `=` or `&` is not.
        var start = 0
        while start <= bytes.count {
            var end = start
            while end < bytes.count, bytes[end] != ampersand { end += 1 }
            let equals = bytes.firstIndex(of: UInt8(ascii: "="), from: start, to: end) ?? end
            for part in [start..<equals, min(equals + 1, end)..<end] {
                guard
                    let decoded = RequestTarget.percentDecoded(bytes.extracting(part), plusIsSpace: true),
                    String(validating: decoded, as: UTF8.self) != nil
                else { return false }
            }
            start = end + 1
        }
        return true
    }

    /// Calls `body` with `piece` decoded (`%XX` and `+`): a piece `isValid` accepted, so the
    /// decoding never fails.
    private static func decoded<Failure: Error>(
        _ piece: Span<UInt8>, _ body: (Span<UInt8>) throws(Failure) -> Void
    ) throws(Failure) {
        let bytes = RequestTarget.percentDecoded(piece, plusIsSpace: true) ?? piece.array()
        try body(bytes.span)
    }
}

private let ampersand = UInt8(ascii: "&")
