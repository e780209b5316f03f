/// A strict, bounded CBOR decoder (RFC 8949) for what Apple's App Attest sends: maps with
/// text keys, byte and text strings, integers and arrays, each of definite length. It is a
/// pure function of its input, which a client chose: every limit is checked before the
/// work it bounds, so no input costs more than `Limits` allows.
///
/// Refused, each with its own `CBORError`: input longer than `maximumBytes` (before any
/// reading); nesting deeper than `maximumDepth`; more than `maximumItems` items; a string
/// or container that claims more than the bytes left; indefinite lengths; bytes after the
/// top-level item; a map key given twice or not a text string; integers, lengths and
/// counts not in their shortest form (RFC 8949 §4.2.1's preferred serialization, which
/// Apple's encoder writes); text that is not UTF-8; tags, floats and simple values.
public struct CBORReader: Sendable {
    /// The bounds on what one input may cost.
    public struct Limits: Sendable, Equatable {
        /// The longest input read, in bytes. Attestation objects are under 8 KiB.
        public var maximumBytes: Int
        /// The deepest nesting read: the top-level item is at depth 1. An attestation
        /// object's certificates are at depth 4.
        public var maximumDepth: Int
        /// The most items read, counting every key, value and container. An attestation
        /// object has about ten.
        public var maximumItems: Int

        /// Limits with the defaults given: 64 KiB, depth 8, 256 items.
        public init(maximumBytes: Int = 64 * 1024, maximumDepth: Int = 8, maximumItems: Int = 256) {
            self.maximumBytes = maximumBytes
            self.maximumDepth = maximumDepth
            self.maximumItems = maximumItems
        }
    }

    /// The limits every input is read under.
    public let limits: Limits

    /// A reader under `limits`.
    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// The one item `input` encodes, all of `input` used.
    public func read(_ input: [UInt8]) throws(CBORError) -> CBORValue {
        guard input.count <= limits.maximumBytes else { throw .tooLarge(limit: limits.maximumBytes) }
        var cursor = Cursor(input: input, limits: limits)
        let value = try cursor.readItem(depth: 1)
        guard cursor.offset == input.count else { throw .trailingBytes }
        return value
    }
}

/// The reader's position in one input and the items counted so far.
private struct Cursor {
    let input: [UInt8]
    let limits: CBORReader.Limits
    var offset = 0
    var items = 0

    init(input: [UInt8], limits: CBORReader.Limits) {
        self.input = input
        self.limits = limits
    }

    var remaining: Int { input.count - offset }

    /// The item at `offset`, at nesting `depth`. Recursion is bounded by `maximumDepth`.
    mutating func readItem(depth: Int) throws(CBORError) -> CBORValue {
        guard depth <= limits.maximumDepth else { throw .tooDeep(limit: limits.maximumDepth) }
        items += 1
        guard items <= limits.maximumItems else { throw .tooManyItems(limit: limits.maximumItems) }
        let initial = try readByte()
        let major = initial >> 5
        let information = initial & 0x1F
        switch major {
        case 6: throw .unsupported("a tag")
        case 7: throw .unsupported("a float or simple value")
        default: break
        }
        if information == 31 {
            // RFC 8949 §3.2: 31 means "indefinite length" for strings and containers, and is
            // not well-formed for integers.
            throw major >= 2 ? .indefiniteLength : .unsupported("reserved additional information")
        }
        let argument = try readArgument(information)
        switch major {
        case 0:
            return .unsigned(argument)
        case 1:
            return .negative(argument)
        case 2:
            return .bytes(Array(try readBytes(argument)))
        case 3:
            guard let text = String(validating: try readBytes(argument), as: UTF8.self) else { throw .invalidUTF8 }
            return .text(text)
        case 4:
            // Each item takes at least one byte: a count beyond the bytes left is refused
            // before any of it is read.
            guard argument <= UInt64(remaining) else { throw .truncated }
            var elements: [CBORValue] = []
            elements.reserveCapacity(Int(argument))
            for _ in 0..<argument { elements.append(try readItem(depth: depth + 1)) }
            return .array(elements)
        default:
            guard argument <= UInt64(remaining / 2) else { throw .truncated }
            var entries: [String: CBORValue] = [:]
            for _ in 0..<argument {
                guard case .text(let key) = try readItem(depth: depth + 1) else { throw .nonTextKey }
                let value = try readItem(depth: depth + 1)
                guard entries.updateValue(value, forKey: key) == nil else { throw .duplicateKey }
            }
            return .map(entries)
        }
    }

    /// The argument that follows an initial byte's additional information (RFC 8949 §3),
    /// refused unless in its shortest form.
    private mutating func readArgument(_ information: UInt8) throws(CBORError) -> UInt64 {
        switch information {
        case 0..<24:
            return UInt64(information)
        case 24:
            let value = try readNumber(bytes: 1)
            guard value >= 24 else { throw .nonShortestEncoding }
            return value
        case 25:
            let value = try readNumber(bytes: 2)
            guard value > 0xFF else { throw .nonShortestEncoding }
            return value
        case 26:
            let value = try readNumber(bytes: 4)
            guard value > 0xFFFF else { throw .nonShortestEncoding }
            return value
        case 27:
            let value = try readNumber(bytes: 8)
            guard value > 0xFFFF_FFFF else { throw .nonShortestEncoding }
            return value
        default:
            throw .unsupported("reserved additional information")
        }
    }

    private mutating func readByte() throws(CBORError) -> UInt8 {
        guard remaining >= 1 else { throw .truncated }
        defer { offset += 1 }
        return input[offset]
    }

    /// A big-endian unsigned number of `bytes` bytes.
    private mutating func readNumber(bytes count: Int) throws(CBORError) -> UInt64 {
        var value: UInt64 = 0
        for byte in try readBytes(UInt64(count)) { value = value << 8 | UInt64(byte) }
        return value
    }

    /// The next `count` bytes, refused when fewer are left.
    private mutating func readBytes(_ count: UInt64) throws(CBORError) -> ArraySlice<UInt8> {
        guard count <= UInt64(remaining) else { throw .truncated }
        let end = offset + Int(count)
        defer { offset = end }
        return input[offset..<end]
    }
}
