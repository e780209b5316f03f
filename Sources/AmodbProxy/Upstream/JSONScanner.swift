/// Reads a JSON text (RFC 8259) once, without building it, to judge an amodb answer:
/// is it complete, well-formed UTF-8 JSON; what kind is its top level; what are the
/// few top-level members the proxy looks at; does a string that JSON escapes hide a
/// given byte string once decoded (the key written as `\u0074\u0065…` or with `\/`).
/// The same pass judges a user token's header and claims before JSONDecoder reads the
/// members the verifier uses (`JSONWebToken`): strict JSON, none of those members twice.
///
/// Iterative, with a depth limit, so a hostile nesting cannot exhaust the stack; a pure
/// value, tested without sockets.
struct JSONScanner {
    /// The kind of a JSON value.
    enum Kind: Sendable, Equatable {
        case object, array, string, number, `true`, `false`, null
    }

    /// A top-level member the caller asked about: its kind, and for a string its decoded
    /// text, for a number its literal text.
    struct Member: Sendable, Equatable {
        /// What the value is.
        var kind: Kind
        /// A string's decoded text or a number's literal text; `nil` for other kinds.
        var text: String?
    }

    /// What one pass found.
    struct Summary: Sendable {
        /// The kind of the whole document.
        var topLevel: Kind
        /// Watched members of a top-level object, by name.
        var members: [String: Member] = [:]
        /// Whether a string written with escapes contains the needle once decoded.
        var needleInEscapedString = false
    }

    /// Why a text is not one JSON value the proxy can pass on. Never holds the text.
    enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// Nothing but white space.
        case empty
        /// Ends inside a value.
        case truncated
        /// A byte that JSON does not allow where it stands.
        case unexpectedByte(offset: Int)
        /// Bytes that are not UTF-8, or a `\u` escape that is half a surrogate pair.
        case notUnicode(offset: Int)
        /// Something after the one value.
        case trailingData(offset: Int)
        /// Arrays and objects nested deeper than `maximumDepth`.
        case tooDeep
        /// A watched top-level member given twice: parsers disagree on which one counts.
        case duplicateMember(String)

        var description: String {
            switch self {
            case .empty: "it is empty"
            case .truncated: "it ends inside a value"
            case .unexpectedByte(let offset): "unexpected byte at offset \(offset)"
            case .notUnicode(let offset): "not UTF-8 (or a lone surrogate escape) at offset \(offset)"
            case .trailingData(let offset): "data after the JSON value at offset \(offset)"
            case .tooDeep: "nested deeper than \(JSONScanner.maximumDepth) levels"
            case .duplicateMember(let name): "the member \(name) is given twice"
            }
        }
    }

    /// The deepest nesting accepted: what Swift's own `JSONDecoder` reads, so a deeper
    /// body would be useless to the apps anyway.
    static let maximumDepth = 512

    /// Scans `bytes`, recording the top-level members named in `watched` and looking for
    /// `needle` in strings that use escapes (unescaped strings are the caller's to search
    /// in the raw bytes, which is faster).
    static func scan(_ bytes: [UInt8], watching watched: Set<String> = [], needle: [UInt8] = []) throws(Failure)
        -> Summary
    {
        var scanner = JSONScanner(bytes: bytes, watched: watched, needle: needle)
        return try scanner.run()
    }

    private enum Expect {
        case value, valueOrArrayEnd, nameOrObjectEnd, name, colon, commaOrEnd, end
    }

    private let bytes: [UInt8]
    private let watched: Set<String>
    private let needle: [UInt8]
    private var index = 0
    /// `true` for an object, `false` for an array, innermost last.
    private var containers: [Bool] = []
    private var summary: Summary?
    /// The name of the top-level member whose value comes next, if it is watched.
    private var pendingMember: String?
    private var decoded: [UInt8] = []

    private init(bytes: [UInt8], watched: Set<String>, needle: [UInt8]) {
        self.bytes = bytes
        self.watched = watched
        self.needle = needle
    }

    private mutating func run() throws(Failure) -> Summary {
        var expect = Expect.value
        while true {
            skipWhiteSpace()
            guard index < bytes.count else {
                if expect == .end, let summary { return summary }
                throw summary == nil && containers.isEmpty ? .empty : .truncated
            }
            let byte = bytes[index]
            switch expect {
            case .end:
                throw .trailingData(offset: index)
            case .value, .valueOrArrayEnd:
                if expect == .valueOrArrayEnd, byte == UInt8(ascii: "]") {
                    index += 1
                    expect = closeContainer()
                } else {
                    expect = try value(startingWith: byte)
                }
            case .nameOrObjectEnd, .name:
                if expect == .nameOrObjectEnd, byte == UInt8(ascii: "}") {
                    index += 1
                    expect = closeContainer()
                    continue
                }
                guard byte == UInt8(ascii: "\"") else { throw .unexpectedByte(offset: index) }
                let name = try string(keepingText: containers.count == 1 && !watched.isEmpty)
                if let name, watched.contains(name) {
                    if summary?.members[name] != nil { throw .duplicateMember(name) }
                    pendingMember = name
                }
                expect = .colon
            case .colon:
                guard byte == UInt8(ascii: ":") else { throw .unexpectedByte(offset: index) }
                index += 1
                expect = .value
            case .commaOrEnd:
                let inObject = containers.last == true
                if byte == UInt8(ascii: ",") {
                    index += 1
                    expect = inObject ? .name : .value
                } else if byte == UInt8(ascii: inObject ? "}" : "]") {
                    index += 1
                    expect = closeContainer()
                } else {
                    throw .unexpectedByte(offset: index)
                }
            }
        }
    }

    /// Reads one value (or opens a container) and says what may follow it.
    private mutating func value(startingWith byte: UInt8) throws(Failure) -> Expect {
        let kind: Kind
        var text: String?
        switch byte {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            guard containers.count < Self.maximumDepth else { throw .tooDeep }
            kind = byte == UInt8(ascii: "{") ? .object : .array
        case UInt8(ascii: "\""):
            kind = .string
            text = try string(keepingText: pendingMember != nil)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            kind = .number
            let start = index
            try number()
            if pendingMember != nil { text = String(decoding: bytes[start..<index], as: UTF8.self) }
        case UInt8(ascii: "t"):
            kind = .true
            try literal("true")
        case UInt8(ascii: "f"):
            kind = .false
            try literal("false")
        case UInt8(ascii: "n"):
            kind = .null
            try literal("null")
        default: throw .unexpectedByte(offset: index)
        }
        if summary == nil { summary = Summary(topLevel: kind) }
        if let name = pendingMember {
            summary?.members[name] = Member(kind: kind, text: text)
            pendingMember = nil
        }
        switch kind {
        case .object:
            index += 1
            containers.append(true)
            return .nameOrObjectEnd
        case .array:
            index += 1
            containers.append(false)
            return .valueOrArrayEnd
        default:
            return containers.isEmpty ? .end : .commaOrEnd
        }
    }

    private mutating func closeContainer() -> Expect {
        containers.removeLast()
        return containers.isEmpty ? .end : .commaOrEnd
    }

    private mutating func skipWhiteSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func literal(_ word: StaticString) throws(Failure) {
        let (bytes, index) = (self.bytes, self.index)
        let failure: Failure? = word.withUTF8Buffer { word in
            guard index + word.count <= bytes.count else {
                return bytes[index...].elementsEqual(word.prefix(bytes.count - index))
                    ? .truncated : .unexpectedByte(offset: index)
            }
            for offset in word.indices where bytes[index + offset] != word[offset] {
                return .unexpectedByte(offset: index + offset)
            }
            return nil
        }
        if let failure { throw failure }
        self.index += word.utf8CodeUnitCount
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?` (RFC 8259 §6).
    private mutating func number() throws(Failure) {
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count else { throw .truncated }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            try digits()
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            try digits()
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            try digits()
        }
    }

    /// One or more decimal digits.
    private mutating func digits() throws(Failure) {
        guard index < bytes.count else { throw .truncated }
        guard Self.isDigit(bytes[index]) else { throw .unexpectedByte(offset: index) }
        while index < bytes.count, Self.isDigit(bytes[index]) { index += 1 }
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    /// Reads a string from its opening quote: control bytes refused, escapes and UTF-8
    /// checked. Returns its decoded text when `keepingText`. A string with escapes is
    /// decoded and searched for the needle.
    private mutating func string(keepingText: Bool) throws(Failure) -> String? {
        index += 1
        let start = index
        var escaped = false
        decoded.removeAll(keepingCapacity: true)
        while true {
            guard index < bytes.count else { throw .truncated }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                let contentEnd = index
                index += 1
                if escaped, ByteSearch.contains(decoded, needle) { summary?.needleInEscapedString = true }
                guard keepingText else { return nil }
                return escaped
                    ? String(decoding: decoded, as: UTF8.self)
                    : String(decoding: bytes[start..<contentEnd], as: UTF8.self)
            case UInt8(ascii: "\\"):
                if !escaped {
                    escaped = true
                    decoded.append(contentsOf: bytes[start..<index])
                }
                try escape()
            case 0x00..<0x20:
                throw .unexpectedByte(offset: index)
            case 0x20..<0x80:
                if escaped { decoded.append(byte) }
                index += 1
            default:
                let length = try utf8Sequence()
                if escaped { decoded.append(contentsOf: bytes[index..<index + length]) }
                index += length
            }
        }
    }

    /// Decodes the escape at `index` (a backslash) into `decoded`.
    private mutating func escape() throws(Failure) {
        guard index + 1 < bytes.count else { throw .truncated }
        let letter = bytes[index + 1]
        let simple: UInt8? =
            switch letter {
            case UInt8(ascii: "\""): 0x22
            case UInt8(ascii: "\\"): 0x5C
            case UInt8(ascii: "/"): 0x2F
            case UInt8(ascii: "b"): 0x08
            case UInt8(ascii: "f"): 0x0C
            case UInt8(ascii: "n"): 0x0A
            case UInt8(ascii: "r"): 0x0D
            case UInt8(ascii: "t"): 0x09
            default: nil
            }
        if let simple {
            decoded.append(simple)
            index += 2
            return
        }
        guard letter == UInt8(ascii: "u") else { throw .unexpectedByte(offset: index + 1) }
        let escapeStart = index
        index += 2
        var scalar = try hexQuad()
        if (0xD800...0xDBFF).contains(scalar) {
            // A high surrogate must be followed at once by an escaped low one (RFC 8259 §7).
            guard index + 1 < bytes.count else { throw .truncated }
            guard bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                throw .notUnicode(offset: escapeStart)
            }
            index += 2
            let low = try hexQuad()
            guard (0xDC00...0xDFFF).contains(low) else { throw .notUnicode(offset: escapeStart) }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        } else if (0xDC00...0xDFFF).contains(scalar) {
            throw .notUnicode(offset: escapeStart)
        }
        guard let unicode = Unicode.Scalar(scalar) else { throw .notUnicode(offset: escapeStart) }
        decoded.append(contentsOf: UTF8.encode(unicode)!)
    }

    /// Four hexadecimal digits.
    private mutating func hexQuad() throws(Failure) -> UInt32 {
        guard index + 4 <= bytes.count else { throw .truncated }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw .unexpectedByte(offset: index)
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    /// The length of the well-formed UTF-8 sequence at `index` (its first byte is not
    /// ASCII): no overlong forms, no surrogates, nothing above U+10FFFF (RFC 3629 §4).
    private func utf8Sequence() throws(Failure) -> Int {
        let lead = bytes[index]
        let length: Int
        var second: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0:
            length = 3
            second = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED:
            length = 3
            second = 0x80...0x9F
        case 0xF0:
            length = 4
            second = 0x90...0xBF
        case 0xF1...0xF3: length = 4
        case 0xF4:
            length = 4
            second = 0x80...0x8F
        default: throw .notUnicode(offset: index)
        }
        guard index + length <= bytes.count else { throw .truncated }
        guard second.contains(bytes[index + 1]) else { throw .notUnicode(offset: index) }
        for offset in 2..<length where !(0x80...0xBF).contains(bytes[index + offset]) {
            throw .notUnicode(offset: index)
        }
        return length
    }
}
