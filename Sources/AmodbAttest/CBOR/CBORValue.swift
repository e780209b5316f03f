/// A CBOR data item (RFC 8949) of the kinds Apple's App Attest objects are made of:
/// integers, byte and text strings, arrays, and maps with text keys. `CBORReader` makes
/// them; nothing else (tags, floats, simple values) is read.
public indirect enum CBORValue: Sendable, Equatable {
    /// An unsigned integer (major type 0).
    case unsigned(UInt64)
    /// A negative integer (major type 1): the value is −1 − `n`.
    case negative(UInt64)
    /// A byte string (major type 2).
    case bytes([UInt8])
    /// A text string (major type 3), valid UTF-8.
    case text(String)
    /// An array (major type 4).
    case array([CBORValue])
    /// A map (major type 5) whose keys are text strings, each key once.
    case map([String: CBORValue])

    /// The bytes of a byte string; `nil` for any other item.
    public var bytes: [UInt8]? {
        if case .bytes(let bytes) = self { bytes } else { nil }
    }

    /// The text of a text string; `nil` for any other item.
    public var text: String? {
        if case .text(let text) = self { text } else { nil }
    }

    /// The items of an array; `nil` for any other item.
    public var array: [CBORValue]? {
        if case .array(let items) = self { items } else { nil }
    }

    /// The entries of a map; `nil` for any other item.
    public var map: [String: CBORValue]? {
        if case .map(let entries) = self { entries } else { nil }
    }
}
