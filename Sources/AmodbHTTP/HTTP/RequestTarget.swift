import AmodbBytes

/// Turns a request target into a decoded path and query (RFC 9112 §3.2, RFC 3986).
/// Percent-decoding happens here, once; whatever could mean something else to
/// another parser is refused before routing: encoded `/` or `\\`, NUL and other
/// control bytes, `.` and `..` segments, empty segments, fragments.
enum RequestTarget {
    /// The decoded path and query pairs of an origin-form or absolute-form target.
    static func parse(_ target: String) throws(HTTPParseError) -> (path: String, query: RequestQuery) {
        try parse(bytes: target.utf8.span, whole: target).get()
    }

    /// The same, read from the target's bytes by index: every request passes here, and
    /// searching a `Substring`'s UTF-8 view checks each index.
    /// `whole` is the target as a string: a path that is the whole target and needs no
    /// decoding (the common case) shares its storage instead of being copied.
    private static func parse(
        bytes target: Span<UInt8>, whole: String
    ) -> Result<(path: String, query: RequestQuery), HTTPParseError> {
        // asterisk-form is for OPTIONS to the server itself
        if target.count == 1, target[0] == UInt8(ascii: "*") { return .failure(.invalidTarget) }
        var start = 0
        if target.isEmpty || target[0] != UInt8(ascii: "/"), let scheme = schemeLength(target) {
            // absolute-form (RFC 9112 §3.2.2): servers must accept it; the authority is not ours to route on.
            var slash = scheme
            while slash < target.count, target[slash] != UInt8(ascii: "/"), target[slash] != UInt8(ascii: "?") {
                slash += 1
            }
            guard slash < target.count else { return .success(("/", RequestQuery())) }
            guard target[slash] == UInt8(ascii: "/") else { return .failure(.invalidTarget) }
            start = slash
        }
        guard start < target.count, target[start] == UInt8(ascii: "/") else { return .failure(.invalidTarget) }
        var question: Int?
        for index in start..<target.count {
            switch target[index] {
            case UInt8(ascii: "#"): return .failure(.invalidTarget)
            case UInt8(ascii: "?") where question == nil: question = index
            default: break
            }
        }
        let path = target.extracting(start..<(question ?? target.count))
        return Result { () throws(HTTPParseError) in
            let decoded = try decodePath(path, whole: start == 0 && question == nil ? whole : nil)
            guard let question else { return (decoded, RequestQuery()) }
            // The query stays the target's own bytes (a slice of it, no copy), checked here once.
            guard RequestQuery.isValid(target.extracting((question + 1)...)) else { throw .invalidQuery }
            let utf8 = whole.utf8
            let from = utf8.index(utf8.startIndex, offsetBy: question + 1)
            return (decoded, RequestQuery(checked: whole[from...]))
        }
    }

    /// The length of an `http://` or `https://` prefix (any case), or `nil`.
    private static func schemeLength(_ target: Span<UInt8>) -> Int? {
        for scheme: StaticString in ["http://", "https://"] {
            let length = scheme.utf8CodeUnitCount
            if target.count >= length, ASCIIBytes.equalsIgnoringCase(target, 0, length, scheme) { return length }
        }
        return nil
    }

    /// `raw` decoded; `whole`, when given, is `raw` as a string.
    private static func decodePath(_ raw: Span<UInt8>, whole: String?) throws(HTTPParseError) -> String {
        // A backslash, NUL or another control byte is refused escaped or not; one pass finds
        // them and whether any escape needs decoding.
        var hasEscape = false
        for index in raw.indices {
            let byte = raw[index]
            if byte == UInt8(ascii: "\\") || byte < 0x20 || byte == 0x7F { throw .invalidPath }
            if byte == UInt8(ascii: "%") { hasEscape = true }
        }
        // Without an escape, the path is its own decoding (the head parser let only visible
        // ASCII through): checked in place, with no copy but the result (the common case).
        if !hasEscape {
            guard segmentsAreValid(raw) else { throw .invalidPath }
            return whole ?? raw.decodedString()
        }
        // An encoded "/" or "\\" would change the segments another parser sees; NUL and controls mean nothing here.
        guard let bytes = percentDecoded(raw, plusIsSpace: false, refusing: [UInt8(ascii: "/"), UInt8(ascii: "\\")])
        else {
            throw .invalidPath
        }
        guard bytes.allSatisfy({ $0 >= 0x20 && $0 != 0x7F }) else { throw .invalidPath }
        guard let path = String(validating: bytes, as: UTF8.self) else { throw .invalidPath }
        // Segments are split on bytes, not Characters: a combining mark after "/" (`%CC%81`) makes
        // one Character of both, and a Character split would let `/a/../%CC%81b` or `/a//%CC%81` through.
        guard segmentsAreValid(bytes.span) else { throw .invalidPath }
        return path
    }

    /// Whether a decoded path (starting with `/`) has no empty, `.` or `..` segment; "/" alone is valid.
    private static func segmentsAreValid(_ bytes: Span<UInt8>) -> Bool {
        let count = bytes.count
        if count == 1 { return true }
        var start = 1
        var index = 1
        while index < count {
            if bytes[index] == UInt8(ascii: "/") {
                guard segmentIsValid(bytes, from: start, to: index) else { return false }
                start = index + 1
            }
            index += 1
        }
        return segmentIsValid(bytes, from: start, to: count)
    }

    /// Whether `bytes[start..<end]` is a segment a path may hold: not empty, `.` or `..`.
    @inline(__always)
    private static func segmentIsValid(_ bytes: Span<UInt8>, from start: Int, to end: Int) -> Bool {
        switch end - start {
        case 0: false
        case 1: bytes[start] != UInt8(ascii: ".")
        case 2: bytes[start] != UInt8(ascii: ".") || bytes[start + 1] != UInt8(ascii: ".")
        default: true
        }
    }

    /// Decodes `%XX` escapes once; `nil` for a malformed escape or one that encodes a
    /// byte in `refusing`.
    static func percentDecoded(_ text: Span<UInt8>, plusIsSpace: Bool, refusing: [UInt8] = []) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(text.count)
        var index = 0
        while index < text.count {
            let byte = text[index]
            index += 1
            switch byte {
            case UInt8(ascii: "%"):
                guard index + 1 < text.count, let high = hexValue(text[index]), let low = hexValue(text[index + 1])
                else {
                    return nil
                }
                index += 2
                let byte = high << 4 | low
                if refusing.contains(byte) { return nil }
                output.append(byte)
            case UInt8(ascii: "+") where plusIsSpace:
                output.append(UInt8(ascii: " "))
            default:
                output.append(byte)
            }
        }
        return output
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
