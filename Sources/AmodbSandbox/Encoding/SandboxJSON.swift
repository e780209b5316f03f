import Foundation

/// Turns models into the bytes amodb would send: the models' own `Encodable`
/// conformances, `null` for absent optionals, slashes unescaped (`"/abc.jpg"`),
/// keys sorted so every answer is byte-for-byte deterministic.
enum SandboxJSON {
    /// Optional keys amodb leaves out rather than sending `null`: `credits` and `ratings`
    /// unless asked for, `dates` on the lists other than `now_playing` and `upcoming`.
    static let keysOmittedWhenNil: Set<String> = ["credits", "ratings", "dates"]

    /// Encodes a value as amodb would send it.
    static func encode(_ value: some Encodable) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(NullWriting(wrapped: value, omittedKeys: keysOmittedWhenNil)))
    }
}
