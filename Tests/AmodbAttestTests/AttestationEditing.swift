import AmodbAttest
import AmodbAttestTestSupport

/// Changes to an attestation or assertion object, each one field, made by reading the
/// CBOR, changing it and writing it back: what a test changes is exactly what it names.
enum AttestationEditing {
    /// What reading an object back failed on.
    struct EditError: Error, CustomStringConvertible {
        let description: String
    }

    /// Offsets in an attestation's authenticator data (WebAuthn §6.1, §6.5.1).
    enum AuthenticatorDataOffset {
        static let relyingPartyIDHash = 0..<32
        static let signCount = 33..<37
        static let aaguid = 37..<53
        static let credentialID = 55..<87
    }

    /// `object` with its top-level map changed by `change`.
    static func changing(_ object: [UInt8], _ change: (inout [String: CBORValue]) throws -> Void) throws -> [UInt8] {
        guard var map = try CBORReader().read(object).map else { throw EditError(description: "not a CBOR map") }
        try change(&map)
        return CBORWriter.encode(.map(map))
    }

    /// `object` with the byte string at `key` changed by `change`.
    static func changingBytes(_ object: [UInt8], at key: String, _ change: (inout [UInt8]) throws -> Void) throws
        -> [UInt8]
    {
        try changing(object) { map in
            guard var bytes = map[key]?.bytes else { throw EditError(description: "no byte string \(key)") }
            try change(&bytes)
            map[key] = .bytes(bytes)
        }
    }

    /// An attestation with its `x5c` changed by `change`.
    static func changingCertificates(_ attestation: [UInt8], _ change: (inout [[UInt8]]) throws -> Void) throws
        -> [UInt8]
    {
        try changing(attestation) { map in
            guard var statement = map["attStmt"]?.map, let chain = statement["x5c"]?.array else {
                throw EditError(description: "no attStmt.x5c")
            }
            var certificates = chain.compactMap(\.bytes)
            try change(&certificates)
            statement["x5c"] = .array(certificates.map { .bytes($0) })
            map["attStmt"] = .map(statement)
        }
    }

    /// The DER certificates of an attestation's `x5c`.
    static func certificates(of attestation: [UInt8]) throws -> [[UInt8]] {
        var found: [[UInt8]] = []
        _ = try changingCertificates(attestation) { found = $0 }
        return found
    }

    /// `bytes` with the byte at `index` inverted.
    static func flipping(_ bytes: [UInt8], at index: Int) -> [UInt8] {
        var flipped = bytes
        flipped[index] ^= 0xFF
        return flipped
    }

    /// Where `needle` first occurs in `haystack`.
    static func firstRange(of needle: [UInt8], in haystack: [UInt8]) -> Range<Int>? {
        guard needle.count <= haystack.count else { return nil }
        for start in 0...(haystack.count - needle.count)
        where haystack[start..<start + needle.count].elementsEqual(needle) {
            return start..<start + needle.count
        }
        return nil
    }
}
