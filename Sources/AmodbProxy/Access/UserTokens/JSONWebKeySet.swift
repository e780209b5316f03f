import AmodbCrypto
import Foundation

/// A JSON Web Key Set (RFC 7517 §5) as an identity provider publishes it: the signature
/// keys by `kid`. Only what verifies RS256 or ES256 is kept; a key of another type or
/// curve, for another use (`use` other than `sig`), for another algorithm, without a
/// `kid`, or that libcrypto refuses, is skipped, so one odd key does not cost the rest.
struct JSONWebKeySet: Sendable {
    /// The largest document read, in bytes: real sets are a few KiB.
    static let maxBytes = 256 * 1024
    /// The most keys a set may list: real sets hold two to a dozen.
    static let maxKeys = 64

    /// Why a document is not a key set; the set held before stays in force.
    enum Problem: Error, Sendable, Equatable, CustomStringConvertible {
        case tooLarge, notJSON, noKeysArray
        case tooManyKeys(Int)

        var description: String {
            switch self {
            case .tooLarge: "the key set is larger than \(JSONWebKeySet.maxBytes) bytes"
            case .notJSON: "the key set is not a JSON object"
            case .noKeysArray: "the key set has no keys array"
            case .tooManyKeys(let count): "the key set lists \(count) keys, more than \(JSONWebKeySet.maxKeys)"
            }
        }
    }

    /// The usable keys by `kid`.
    let keys: [String: PublicKey]

    /// Keys built by hand (tests).
    init(keys: [String: PublicKey]) {
        self.keys = keys
    }

    /// Reads a key set document.
    init(parsing bytes: [UInt8]) throws(Problem) {
        guard bytes.count <= Self.maxBytes else { throw .tooLarge }
        guard let document = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] else {
            throw .notJSON
        }
        guard let entries = document["keys"] as? [Any] else { throw .noKeysArray }
        guard entries.count <= Self.maxKeys else { throw .tooManyKeys(entries.count) }
        var keys: [String: PublicKey] = [:]
        for case let entry as [String: Any] in entries {
            guard let kid = entry["kid"] as? String, !kid.isEmpty, keys[kid] == nil, let key = Self.key(entry) else {
                continue
            }
            keys[kid] = key
        }
        self.keys = keys
    }

    /// The verification key a JSON Web Key describes, or `nil` when it is none this proxy uses.
    static func key(_ entry: [String: Any]) -> PublicKey? {
        if let use = entry["use"] { guard use as? String == "sig" else { return nil } }
        if let operations = entry["key_ops"] {
            guard (operations as? [String])?.contains("verify") == true else { return nil }
        }
        let declared = entry["alg"].map { $0 as? String }
        switch entry["kty"] as? String {
        case "RSA":
            guard declared == nil || declared == "RS256",
                let n = bytes(entry["n"]), let e = bytes(entry["e"])
            else { return nil }
            return try? PublicKey(rsaModulus: n, exponent: e)
        case "EC":
            guard declared == nil || declared == "ES256", entry["crv"] as? String == "P-256",
                let x = bytes(entry["x"]), let y = bytes(entry["y"])
            else { return nil }
            return try? PublicKey(p256X: x, y: y)
        default:
            return nil
        }
    }

    /// A key parameter's bytes: a base64url string (RFC 7518 §6), else `nil`.
    private static func bytes(_ parameter: Any?) -> [UInt8]? {
        (parameter as? String).flatMap { Base64URL.decode($0) }
    }
}
