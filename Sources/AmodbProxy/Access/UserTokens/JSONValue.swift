/// A member of a JSON object (RFC 8259) as the readers of ID tokens and key sets need it,
/// read with `JSONDecoder`: they must tell a member's kind before they know what it means (a
/// claim that must be a string, a NumericDate that must be a number and not `true`, `aud` as
/// one string or an array of them) and so cannot name one Swift type to decode it into.
///
/// A scalar is kept whole. An array is read only as far as those readers look into one: its
/// elements when all are strings (`aud`, `key_ops`), else just its kind; an object is just
/// its kind. Decodable can only ask a value's kind by trying each, and every wrong try
/// throws: reading nested values whole that way costs time that grows much faster than the
/// nesting (0.8 s for a 1 KiB token of 510 nested arrays, where reading the same text takes
/// microseconds). What is not read here has passed JSONDecoder's check of the syntax.
enum JSONValue: Decodable, Equatable, Sendable {
    case string(String)
    /// Any number a `Double` holds (an integer beyond 2⁵³ rounded); a literal beyond its
    /// range, such as `1e400` or `1e-400`, is no value.
    case number(Double)
    case bool(Bool)
    case null
    /// An array, with its elements when every one is a string (`[]` for an empty one);
    /// `nil` when any is not.
    case array(strings: [String]?)
    /// An object, whose members are not read.
    case object

    /// Reads one value; throws when it is none (a number beyond a `Double`, a string that
    /// is not Unicode).
    init(from decoder: any Decoder) throws {
        let value = try decoder.singleValueContainer()
        // The kinds a token holds most, first: each wrong try costs a thrown error, and no
        // value takes more than six tries, however it is nested (the try of an array as
        // strings stops at its first element that is not one).
        if value.decodeNil() {
            self = .null
        } else if let text = try? value.decode(String.self) {
            self = .string(text)
        } else if let number = try? value.decode(Double.self) {
            // JSONDecoder reads `true` as no number, and `1` as no Bool.
            self = .number(number)
        } else if let flag = try? value.decode(Bool.self) {
            self = .bool(flag)
        } else if let strings = try? value.decode([String].self) {
            self = .array(strings: strings)
        } else if (try? decoder.unkeyedContainer()) != nil {
            self = .array(strings: nil)
        } else {
            // An object, or no value at all, which throws here.
            _ = try decoder.container(keyedBy: AnyName.self)
            self = .object
        }
    }

    /// The text of a string; `nil` for any other value.
    var text: String? {
        guard case .string(let text) = self else { return nil }
        return text
    }

    /// The elements of an array of strings; `nil` for any other value.
    var strings: [String]? {
        guard case .array(let strings?) = self else { return nil }
        return strings
    }

    /// Any member name: an object is opened to learn that it is one, and nothing in it read.
    private struct AnyName: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }

        init(stringValue: String) {
            self.stringValue = stringValue
        }

        init?(intValue: Int) {
            nil
        }
    }
}

extension KeyedDecodingContainer {
    /// The value of the member `key`, or `nil` when the object has none; a member whose value
    /// is `null` is `.null` (where `decodeIfPresent` would give `nil`).
    func member(_ key: Key) throws -> JSONValue? {
        guard contains(key) else { return nil }
        return try decode(JSONValue.self, forKey: key)
    }
}
