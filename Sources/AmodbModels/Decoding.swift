extension KeyedDecodingContainer {
    /// A string that amodb may send as missing, `null` or `""`: all three are `nil`.
    func decodeOptionalText(forKey key: Key) throws -> String? {
        guard let text = try decodeIfPresent(String.self, forKey: key), !text.isEmpty else { return nil }
        return text
    }

    /// A value amodb may leave out; the model's default stands in for it.
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key, default fallback: T) throws -> T {
        try decodeIfPresent(type, forKey: key) ?? fallback
    }
}
