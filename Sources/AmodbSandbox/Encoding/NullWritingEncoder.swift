/// An `Encoder` that forwards to another one but writes `null` where synthesized
/// `Encodable` code would leave a `nil` optional out.
///
/// amodb sends `"poster_path": null` and `"votes": null` rather than dropping the key;
/// the models' synthesized encoders call `encodeIfPresent`, which drops it. Wrapping
/// the encoder keeps the models as the single source of the wire shape while the
/// sandbox's JSON matches amodb's. Keys in `omittedKeys` are still left out when `nil`
/// (`credits` and `ratings` exist only when `append_to_response` asks for them).
struct NullWritingEncoder: Encoder {
    /// The encoder that does the writing (JSONEncoder's).
    let base: any Encoder
    /// Key names left out rather than written as `null` when their value is `nil`.
    let omittedKeys: Set<String>

    var codingPath: [any CodingKey] { base.codingPath }
    var userInfo: [CodingUserInfoKey: Any] { base.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(NullWritingKeyedContainer(base: base.container(keyedBy: type), omittedKeys: omittedKeys))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        NullWritingUnkeyedContainer(base: base.unkeyedContainer(), omittedKeys: omittedKeys)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        NullWritingSingleValueContainer(base: base.singleValueContainer(), omittedKeys: omittedKeys)
    }
}

/// A value whose encoding goes through `NullWritingEncoder`.
struct NullWriting<Wrapped: Encodable>: Encodable {
    let wrapped: Wrapped
    let omittedKeys: Set<String>

    func encode(to encoder: any Encoder) throws {
        try wrapped.encode(to: NullWritingEncoder(base: encoder, omittedKeys: omittedKeys))
    }
}

/// The keyed container of `NullWritingEncoder`: `encodeIfPresent(nil)` writes `null`.
struct NullWritingKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    var base: KeyedEncodingContainer<Key>
    let omittedKeys: Set<String>

    var codingPath: [any CodingKey] { base.codingPath }

    mutating func encodeNil(forKey key: Key) throws { try base.encodeNil(forKey: key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { try base.encode(value, forKey: key) }
    mutating func encode(_ value: String, forKey key: Key) throws { try base.encode(value, forKey: key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { try base.encode(value, forKey: key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { try base.encode(value, forKey: key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { try base.encode(value, forKey: key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try base.encode(value, forKey: key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try base.encode(value, forKey: key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try base.encode(value, forKey: key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try base.encode(value, forKey: key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try base.encode(value, forKey: key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try base.encode(value, forKey: key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try base.encode(value, forKey: key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try base.encode(value, forKey: key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try base.encode(value, forKey: key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try base.encode(NullWriting(wrapped: value, omittedKeys: omittedKeys), forKey: key)
    }

    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        try encodeOptional(value, forKey: key)
    }

    /// Writes the value, or `null` (or nothing, for an omitted key) when it is `nil`.
    private mutating func encodeOptional<T: Encodable>(_ value: T?, forKey key: Key) throws {
        if let value {
            try encode(value, forKey: key)
        } else if !omittedKeys.contains(key.stringValue) {
            try base.encodeNil(forKey: key)
        }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(
            NullWritingKeyedContainer<NestedKey>(
                base: base.nestedContainer(keyedBy: keyType, forKey: key), omittedKeys: omittedKeys))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        NullWritingUnkeyedContainer(base: base.nestedUnkeyedContainer(forKey: key), omittedKeys: omittedKeys)
    }

    mutating func superEncoder() -> any Encoder {
        NullWritingEncoder(base: base.superEncoder(), omittedKeys: omittedKeys)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        NullWritingEncoder(base: base.superEncoder(forKey: key), omittedKeys: omittedKeys)
    }
}

/// The unkeyed container of `NullWritingEncoder`: elements are encoded through it too.
struct NullWritingUnkeyedContainer: UnkeyedEncodingContainer {
    var base: any UnkeyedEncodingContainer
    let omittedKeys: Set<String>

    var codingPath: [any CodingKey] { base.codingPath }
    var count: Int { base.count }

    mutating func encodeNil() throws { try base.encodeNil() }
    mutating func encode(_ value: Bool) throws { try base.encode(value) }
    mutating func encode(_ value: String) throws { try base.encode(value) }
    mutating func encode(_ value: Double) throws { try base.encode(value) }
    mutating func encode(_ value: Float) throws { try base.encode(value) }
    mutating func encode(_ value: Int) throws { try base.encode(value) }
    mutating func encode(_ value: Int8) throws { try base.encode(value) }
    mutating func encode(_ value: Int16) throws { try base.encode(value) }
    mutating func encode(_ value: Int32) throws { try base.encode(value) }
    mutating func encode(_ value: Int64) throws { try base.encode(value) }
    mutating func encode(_ value: UInt) throws { try base.encode(value) }
    mutating func encode(_ value: UInt8) throws { try base.encode(value) }
    mutating func encode(_ value: UInt16) throws { try base.encode(value) }
    mutating func encode(_ value: UInt32) throws { try base.encode(value) }
    mutating func encode(_ value: UInt64) throws { try base.encode(value) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try base.encode(NullWriting(wrapped: value, omittedKeys: omittedKeys))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<
        NestedKey
    > {
        KeyedEncodingContainer(
            NullWritingKeyedContainer<NestedKey>(
                base: base.nestedContainer(keyedBy: keyType), omittedKeys: omittedKeys))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        NullWritingUnkeyedContainer(base: base.nestedUnkeyedContainer(), omittedKeys: omittedKeys)
    }

    mutating func superEncoder() -> any Encoder {
        NullWritingEncoder(base: base.superEncoder(), omittedKeys: omittedKeys)
    }
}

/// The single-value container of `NullWritingEncoder`.
struct NullWritingSingleValueContainer: SingleValueEncodingContainer {
    var base: any SingleValueEncodingContainer
    let omittedKeys: Set<String>

    var codingPath: [any CodingKey] { base.codingPath }

    mutating func encodeNil() throws { try base.encodeNil() }
    mutating func encode(_ value: Bool) throws { try base.encode(value) }
    mutating func encode(_ value: String) throws { try base.encode(value) }
    mutating func encode(_ value: Double) throws { try base.encode(value) }
    mutating func encode(_ value: Float) throws { try base.encode(value) }
    mutating func encode(_ value: Int) throws { try base.encode(value) }
    mutating func encode(_ value: Int8) throws { try base.encode(value) }
    mutating func encode(_ value: Int16) throws { try base.encode(value) }
    mutating func encode(_ value: Int32) throws { try base.encode(value) }
    mutating func encode(_ value: Int64) throws { try base.encode(value) }
    mutating func encode(_ value: UInt) throws { try base.encode(value) }
    mutating func encode(_ value: UInt8) throws { try base.encode(value) }
    mutating func encode(_ value: UInt16) throws { try base.encode(value) }
    mutating func encode(_ value: UInt32) throws { try base.encode(value) }
    mutating func encode(_ value: UInt64) throws { try base.encode(value) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try base.encode(NullWriting(wrapped: value, omittedKeys: omittedKeys))
    }
}
