import AmodbCrypto
import Foundation

/// A JSON Web Key Set (RFC 7517 §5) as an identity provider publishes it: the signature
/// keys by `kid`. Only what verifies RS256 or ES256 is kept; a key of another type or
/// curve, for another use (`use` other than `sig`), for another algorithm, without a
/// `kid`, too weak (RSA under 2048 bits, an exponent under 3 or even), or that libcrypto
/// refuses, is skipped, so one odd key does not cost the rest. Each skipped key is kept
/// with the reason, for the event log, `/readyz` and the refusal of a token that names it.
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

    /// A key the set lists that is not used, and why.
    struct SkippedKey: Sendable, Equatable {
        /// Its `kid`, when it has a usable one.
        let keyID: String?
        /// Its place in the `keys` array, from 0: how a key without a `kid` is named.
        let index: Int
        /// Why it is not used, for operators and for the token that names it.
        let reason: String
    }

    /// The usable keys by `kid`.
    let keys: [String: PublicKey]
    /// The keys listed but not used, in the set's order.
    let skipped: [SkippedKey]
    /// Each usable key's parameters (type, then `n` and `e`, or `x` and `y`), by `kid`:
    /// two sets with equal material verify exactly the same tokens.
    let material: [String: [UInt8]]

    /// Keys built by hand (tests).
    init(keys: [String: PublicKey]) {
        self.keys = keys
        skipped = []
        material = keys.mapValues { Array($0.algorithm.rawValue.utf8) }
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
        var material: [String: [UInt8]] = [:]
        var skipped: [SkippedKey] = []
        for (index, element) in entries.enumerated() {
            guard let entry = element as? [String: Any] else {
                skipped.append(SkippedKey(keyID: nil, index: index, reason: "it is not a JSON object"))
                continue
            }
            guard let kid = entry["kid"] as? String, !kid.isEmpty else {
                skipped.append(SkippedKey(keyID: nil, index: index, reason: "it has no kid"))
                continue
            }
            guard keys[kid] == nil, !skipped.contains(where: { $0.keyID == kid }) else {
                skipped.append(SkippedKey(keyID: kid, index: index, reason: "a key before it has the same kid"))
                continue
            }
            switch Self.key(entry) {
            case .success(let (key, parameters)):
                keys[kid] = key
                material[kid] = parameters
            case .failure(let skip):
                skipped.append(SkippedKey(keyID: kid, index: index, reason: skip.reason))
            }
        }
        self.keys = keys
        self.skipped = skipped
        self.material = material
    }

    /// Why a JSON Web Key is not used.
    struct Skip: Error {
        let reason: String
    }

    /// The verification key a JSON Web Key describes, with its parameters, or why it is
    /// none this proxy uses.
    static func key(_ entry: [String: Any]) -> Result<(PublicKey, [UInt8]), Skip> {
        if let use = entry["use"] {
            guard let text = use as? String, text == "sig" else {
                return .failure(Skip(reason: "its use is \(shown(use)), not sig"))
            }
        }
        if let operations = entry["key_ops"] {
            guard (operations as? [String])?.contains("verify") == true else {
                return .failure(Skip(reason: "its key_ops do not include verify"))
            }
        }
        let declared = entry["alg"].map { $0 as? String }
        let kty = entry["kty"] as? String
        switch kty {
        case "RSA":
            guard declared == nil || declared == "RS256" else {
                return .failure(Skip(reason: "its alg is \(shown(entry["alg"])); RSA keys are used for RS256"))
            }
            guard let n = bytes(entry["n"]), let e = bytes(entry["e"]) else {
                return .failure(Skip(reason: "its n or e is missing or not base64url"))
            }
            let bits = PublicKey.bitCount(of: n)
            guard (PublicKey.minimumRSABits...PublicKey.maximumRSABits).contains(bits) else {
                return .failure(
                    Skip(
                        reason:
                            "it is an RSA key of \(bits) bits; RS256 keys need \(PublicKey.minimumRSABits) to \(PublicKey.maximumRSABits)"
                    ))
            }
            guard PublicKey.isAcceptableRSAExponent(e) else {
                return .failure(
                    Skip(
                        reason:
                            "its RSA exponent e = \(PublicKey.exponentDescription(e)) is refused: e must be odd, at least 3 and at most 64 bits"
                    ))
            }
            do throws(CryptoError) {
                return .success((try PublicKey(rsaModulus: n, exponent: e), Array("RSA".utf8) + n + [0] + e))
            } catch {
                return .failure(Skip(reason: "libcrypto refused it (\(error.description))"))
            }
        case "EC":
            guard declared == nil || declared == "ES256" else {
                return .failure(Skip(reason: "its alg is \(shown(entry["alg"])); EC keys are used for ES256"))
            }
            guard entry["crv"] as? String == "P-256" else {
                return .failure(Skip(reason: "its curve is \(shown(entry["crv"])); ES256 keys are P-256"))
            }
            guard let x = bytes(entry["x"]), let y = bytes(entry["y"]) else {
                return .failure(Skip(reason: "its x or y is missing or not base64url"))
            }
            do throws(CryptoError) {
                return .success((try PublicKey(p256X: x, y: y), Array("EC".utf8) + x + y))
            } catch {
                return .failure(Skip(reason: "libcrypto refused it (\(error.description))"))
            }
        default:
            return .failure(Skip(reason: "its kty is \(shown(kty)); RSA and EC keys are used"))
        }
    }

    /// A key parameter's bytes: a base64url string (RFC 7518 §6), else `nil`.
    private static func bytes(_ parameter: Any?) -> [UInt8]? {
        (parameter as? String).flatMap { Base64URL.decode($0) }
    }

    /// A member's value as a reason shows it: a short string quoted, anything else by kind.
    private static func shown(_ value: Any?) -> String {
        guard let value else { return "missing" }
        guard let text = value as? String else { return "not a string" }
        return text.count <= 24 ? "\"\(text)\"" : "\"\(text.prefix(24))…\""
    }
}
