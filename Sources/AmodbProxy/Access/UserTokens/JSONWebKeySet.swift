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

    /// Reads a key set document, with JSONDecoder: of each entry, only the members a key is
    /// read from.
    init(parsing bytes: [UInt8]) throws(Problem) {
        guard bytes.count <= Self.maxBytes else { throw .tooLarge }
        let entries: [Entry]
        do {
            entries = try JSONDecoder().decode(Document.self, from: Data(bytes)).entries
        } catch {
            throw error as? Problem ?? .notJSON
        }
        var keys: [String: PublicKey] = [:]
        var material: [String: [UInt8]] = [:]
        var skipped: [SkippedKey] = []
        for (index, element) in entries.enumerated() {
            guard let entry = element.members else {
                skipped.append(SkippedKey(keyID: nil, index: index, reason: "it is not a JSON object"))
                continue
            }
            guard let kid = entry["kid"]?.text, !kid.isEmpty else {
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

    /// A key set document: its `keys`, each entry as far as a key is read from it.
    private struct Document: Decodable {
        let entries: [Entry]

        private enum CodingKeys: String, CodingKey {
            case keys
        }

        /// Throws `Problem.noKeysArray`, or `.tooManyKeys` before reading an entry past
        /// `maxKeys`; JSONDecoder's error when the document is not a JSON object, or a member
        /// read holds no value.
        init(from decoder: any Decoder) throws {
            let members = try decoder.container(keyedBy: CodingKeys.self)
            guard members.contains(.keys), var keys = try? members.nestedUnkeyedContainer(forKey: .keys) else {
                throw Problem.noKeysArray
            }
            var entries: [Entry] = []
            while !keys.isAtEnd {
                guard entries.count < JSONWebKeySet.maxKeys else {
                    throw Problem.tooManyKeys(keys.count ?? entries.count + 1)
                }
                entries.append(try keys.decode(Entry.self))
            }
            self.entries = entries
        }
    }

    /// One element of `keys`.
    private struct Entry: Decodable {
        /// The members a key is read from, by name; `nil` when the element is not an object.
        let members: [String: JSONValue]?

        private enum CodingKeys: String, CodingKey, CaseIterable {
            case kty, kid, use, alg, crv, n, e, x, y
            case keyOperations = "key_ops"
        }

        init(from decoder: any Decoder) throws {
            guard let object = try? decoder.container(keyedBy: CodingKeys.self) else {
                members = nil
                return
            }
            var members: [String: JSONValue] = [:]
            for name in CodingKeys.allCases { members[name.stringValue] = try object.member(name) }
            self.members = members
        }
    }

    /// Why a JSON Web Key is not used.
    struct Skip: Error {
        let reason: String
    }

    /// The verification key a JSON Web Key describes, with its parameters, or why it is
    /// none this proxy uses.
    static func key(_ entry: [String: JSONValue]) -> Result<(PublicKey, [UInt8]), Skip> {
        if let use = entry["use"] {
            guard use.text == "sig" else {
                return .failure(Skip(reason: "its use is \(shown(use)), not sig"))
            }
        }
        if let operations = entry["key_ops"] {
            guard operations.strings?.contains("verify") == true else {
                return .failure(Skip(reason: "its key_ops do not include verify"))
            }
        }
        let declared = entry["alg"].map(\.text)
        let kty = entry["kty"]?.text
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
            guard entry["crv"]?.text == "P-256" else {
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
            // A kty that is not a string is shown as missing, as it always has been.
            return .failure(Skip(reason: "its kty is \(shown(kty.map(JSONValue.string))); RSA and EC keys are used"))
        }
    }

    /// A key parameter's bytes: a base64url string (RFC 7518 §6), else `nil`.
    private static func bytes(_ parameter: JSONValue?) -> [UInt8]? {
        parameter?.text.flatMap { Base64URL.decode($0) }
    }

    /// A member's value as a reason shows it: a short string quoted, anything else by kind.
    private static func shown(_ value: JSONValue?) -> String {
        guard let value else { return "missing" }
        guard let text = value.text else { return "not a string" }
        return text.count <= 24 ? "\"\(text)\"" : "\"\(text.prefix(24))…\""
    }
}
