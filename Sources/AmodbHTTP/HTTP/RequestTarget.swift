/// Turns a request target into a decoded path and query (RFC 9112 §3.2, RFC 3986).
/// Percent-decoding happens here, once; whatever could mean something else to
/// another parser is refused before routing: encoded `/` or `\\`, NUL and other
/// control bytes, `.` and `..` segments, empty segments, fragments.
enum RequestTarget {
    /// The decoded path and query pairs of an origin-form or absolute-form target.
    static func parse(_ target: String) throws(HTTPParseError) -> (path: String, query: [(name: String, value: String)]) {
        var target = Substring(target)
        if target.utf8.count == 1, target.utf8.first == UInt8(ascii: "*") { throw .invalidTarget }   // asterisk-form is for OPTIONS to the server itself
        if target.utf8.first != UInt8(ascii: "/"), let scheme = ["http://", "https://"].first(where: { target.utf8.starts(with: $0.utf8, by: { $0 | 0x20 == $1 }) }) {
            // absolute-form (RFC 9112 §3.2.2): servers must accept it; the authority is not ours to route on.
            let rest = target.dropFirst(scheme.count)
            guard let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) else {
                return ("/", [])
            }
            guard rest[slash] == "/" else { throw .invalidTarget }
            target = rest[slash...]
        }
        guard target.utf8.first == UInt8(ascii: "/") else { throw .invalidTarget }
        if target.utf8.contains(UInt8(ascii: "#")) { throw .invalidTarget }

        let rawPath: Substring
        let rawQuery: Substring?
        // Searched as bytes: a Character search runs grapheme breaking over the whole target.
        if let question = target.utf8.firstIndex(of: UInt8(ascii: "?")) {
            rawPath = target[..<question]
            rawQuery = target[target.utf8.index(after: question)...]
        } else {
            rawPath = target
            rawQuery = nil
        }
        return (try decodePath(rawPath), try rawQuery.map { (query) throws(HTTPParseError) in try decodeQuery(query) } ?? [])
    }

    private static func decodePath(_ raw: Substring) throws(HTTPParseError) -> String {
        if raw.utf8.contains(UInt8(ascii: "\\")) { throw .invalidPath }
        // Without an escape, the path is its own decoding (the head parser let only visible
        // ASCII through): checked in place, with no copy but the result (the common case).
        if !raw.utf8.contains(UInt8(ascii: "%")) {
            guard raw.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x7F }), segmentsAreValid(raw.utf8) else { throw .invalidPath }
            return String(raw)
        }
        // An encoded "/" or "\\" would change the segments another parser sees; NUL and controls mean nothing here.
        guard let bytes = percentDecoded(raw, plusIsSpace: false, refusing: [UInt8(ascii: "/"), UInt8(ascii: "\\")]) else {
            throw .invalidPath
        }
        guard bytes.allSatisfy({ $0 >= 0x20 && $0 != 0x7F }) else { throw .invalidPath }
        guard let path = String(validating: bytes, as: UTF8.self) else { throw .invalidPath }
        // Segments are split on bytes, not Characters: a combining mark after "/" (`%CC%81`) makes
        // one Character of both, and a Character split would let `/a/../%CC%81b` or `/a//%CC%81` through.
        guard segmentsAreValid(bytes) else { throw .invalidPath }
        return path
    }

    /// Whether a decoded path (starting with `/`) has no empty, `.` or `..` segment; "/" alone is valid.
    private static func segmentsAreValid<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
        if bytes.count == 1 { return true }
        let dot = UInt8(ascii: "."), slash = UInt8(ascii: "/")
        var length = 0
        var allDots = true
        for byte in bytes.dropFirst() {
            if byte == slash {
                if length == 0 || (allDots && length <= 2) { return false }   // empty, "." or ".."
                length = 0
                allDots = true
            } else {
                length += 1
                if byte != dot { allDots = false }
            }
        }
        return length > 0 && !(allDots && length <= 2)
    }

    private static func decodeQuery(_ raw: Substring) throws(HTTPParseError) -> [(name: String, value: String)] {
        var pairs: [(name: String, value: String)] = []
        for piece in raw.split(separator: "&") {
            let name: Substring, value: Substring
            if let equals = piece.firstIndex(of: "=") {
                name = piece[..<equals]
                value = piece[piece.index(after: equals)...]
            } else {
                name = piece
                value = ""
            }
            guard let nameBytes = percentDecoded(name, plusIsSpace: true),
                  let valueBytes = percentDecoded(value, plusIsSpace: true),
                  nameBytes.allSatisfy({ $0 >= 0x20 && $0 != 0x7F }),
                  valueBytes.allSatisfy({ $0 >= 0x20 && $0 != 0x7F }),
                  let decodedName = String(validating: nameBytes, as: UTF8.self),
                  let decodedValue = String(validating: valueBytes, as: UTF8.self)
            else { throw .invalidQuery }
            pairs.append((decodedName, decodedValue))
        }
        return pairs
    }

    /// Decodes `%XX` escapes once; `nil` for a malformed escape or one that encodes a
    /// byte in `refusing`.
    static func percentDecoded(_ text: Substring, plusIsSpace: Bool, refusing: [UInt8] = []) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    return nil
                }
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

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
