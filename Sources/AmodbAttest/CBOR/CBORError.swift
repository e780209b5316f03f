/// Why `CBORReader` refused its input. Each case's `reason` says so in a few words fit for
/// a client's error message; none repeats the input.
public enum CBORError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The input is longer than the reader's limit, in bytes; refused before reading any of it.
    case tooLarge(limit: Int)
    /// The input ends inside an item.
    case truncated
    /// Containers nest deeper than the limit.
    case tooDeep(limit: Int)
    /// More items than the limit.
    case tooManyItems(limit: Int)
    /// An indefinite-length string, array or map (RFC 8949 §3.2.2), which this reader does not read.
    case indefiniteLength
    /// Bytes follow the one top-level item.
    case trailingBytes
    /// A map gives the same key twice (RFC 8949 §5.6: not valid in a strict decoder).
    case duplicateKey
    /// A map key that is not a text string.
    case nonTextKey
    /// An integer, length or count not written in its shortest form (RFC 8949 §4.2.1).
    case nonShortestEncoding
    /// A text string that is not valid UTF-8.
    case invalidUTF8
    /// A major type or simple value this reader does not read (tags, floats, `true`,
    /// `null`), or the reserved additional information 28 to 30.
    case unsupported(String)

    /// A short reason, such as `the CBOR input ends inside an item`.
    public var reason: String {
        switch self {
        case .tooLarge(let limit): "the CBOR input is longer than \(limit) bytes"
        case .truncated: "the CBOR input ends inside an item"
        case .tooDeep(let limit): "the CBOR input nests deeper than \(limit) levels"
        case .tooManyItems(let limit): "the CBOR input has more than \(limit) items"
        case .indefiniteLength: "the CBOR input has an indefinite-length item"
        case .trailingBytes: "the CBOR input has bytes after its item"
        case .duplicateKey: "a CBOR map gives a key twice"
        case .nonTextKey: "a CBOR map key is not a text string"
        case .nonShortestEncoding: "a CBOR integer or length is not in its shortest form"
        case .invalidUTF8: "a CBOR text string is not valid UTF-8"
        case .unsupported(let what): "the CBOR input has \(what), which is not read here"
        }
    }

    public var description: String { reason }
}
