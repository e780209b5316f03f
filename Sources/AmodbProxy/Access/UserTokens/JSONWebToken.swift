import AmodbCrypto
import Foundation

/// A compact JSON Web Signature (RFC 7515 §7.1) carrying a JSON Web Token's claims (RFC
/// 7519), read but not yet trusted: its header and claims decoded, its signature and the
/// signing input kept for the verifier. Only the fields the proxy uses are kept; headers
/// that name where to fetch a key (`jku`, `jwk`, `x5u`, `x5c`) are ignored, as the keys
/// are the proxy's configuration, never the token's.
struct JSONWebToken: Sendable {
    /// `alg`: the algorithm the token says it was signed with.
    let algorithm: String
    /// `kid`: which key of the set signed it.
    let keyID: String?
    /// `typ`, when the header has one.
    let type: String?
    let issuer: String?
    /// `sub`; the verifier requires it (RFC 7515's examples have none, so reading does not).
    let subject: String?
    /// `aud`, a string or an array of strings in the token.
    let audiences: [String]
    /// `exp`, `nbf` and `iat`, in seconds since 1970; the verifier requires `exp`.
    let expires: Double?
    let notBefore: Double?
    let issuedAt: Double?
    /// The header and claims parts as sent, with the dot between them: what was signed.
    let signingInput: [UInt8]
    let signature: [UInt8]

    /// Reads `token` (the bytes after `Bearer `); throws why it is not a token.
    init(_ token: some Collection<UInt8>) throws(TokenRefusal) {
        guard token.count <= TokenRefusal.maxTokenBytes else { throw .malformed(.tooLong) }
        let parts = token.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .malformed(.partCount) }
        guard let headerBytes = Base64URL.decode(parts[0]), let claimsBytes = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2])
        else { throw .malformed(.encoding) }
        let header = try Self.read(Header.self, headerBytes, or: .headerJSON, twice: { .headerMemberTwice($0) })
        let claims = try Self.read(Claims.self, claimsBytes, or: .claimsJSON, twice: { .claimTwice($0) })
        // RFC 7515 §4.1.11: a recipient that does not understand a listed extension must
        // refuse the token, and this one understands none.
        if header.critical { throw .critical }
        guard let algorithm = header.algorithm?.text else { throw .malformed(.missingAlgorithm) }
        self.algorithm = algorithm
        keyID = try Self.string(header.keyID)
        type = try Self.string(header.type)
        issuer = try Self.string(claims.issuer)
        subject = try Self.string(claims.subject)
        switch claims.audience {
        case nil: audiences = []
        case .string(let one): audiences = [one]
        case let other?:
            guard let many = other.strings else { throw .malformed(.claimType) }
            audiences = many
        }
        expires = try Self.time(claims.expires)
        notBefore = try Self.time(claims.notBefore)
        issuedAt = try Self.time(claims.issuedAt)
        signingInput = Array(parts[0]) + [UInt8(ascii: ".")] + Array(parts[1])
        self.signature = signature
    }

    /// The header or the claims: the members read from a JSON object.
    private protocol Part: Decodable {
        /// The names of the members read.
        static var names: Set<String> { get }
    }

    /// The header members the proxy reads.
    private struct Header: Part {
        static let names = Set(CodingKeys.allCases.map(\.stringValue))

        /// Whether `crit` is there, whatever its value (`null` included).
        let critical: Bool
        let algorithm: JSONValue?
        let keyID: JSONValue?
        let type: JSONValue?

        private enum CodingKeys: String, CodingKey, CaseIterable {
            case crit, alg, kid, typ
        }

        init(from decoder: any Decoder) throws {
            let members = try decoder.container(keyedBy: CodingKeys.self)
            critical = members.contains(.crit)
            algorithm = try members.member(.alg)
            keyID = try members.member(.kid)
            type = try members.member(.typ)
        }
    }

    /// The claims the proxy reads, each as sent.
    private struct Claims: Part {
        static let names = Set(CodingKeys.allCases.map(\.stringValue))

        let issuer: JSONValue?
        let subject: JSONValue?
        let audience: JSONValue?
        let expires: JSONValue?
        let notBefore: JSONValue?
        let issuedAt: JSONValue?

        private enum CodingKeys: String, CodingKey, CaseIterable {
            case iss, sub, aud, exp, nbf, iat
        }

        init(from decoder: any Decoder) throws {
            let members = try decoder.container(keyedBy: CodingKeys.self)
            issuer = try members.member(.iss)
            subject = try members.member(.sub)
            audience = try members.member(.aud)
            expires = try members.member(.exp)
            notBefore = try members.member(.nbf)
            issuedAt = try members.member(.iat)
        }
    }

    /// `Members`, read from the JSON object in `bytes`; `twice` of its name when a member
    /// read is given twice, `malformation` when they are not one in strict JSON or a member
    /// read holds no value (a number beyond a `Double`'s range).
    private static func read<Members: Part>(
        _ members: Members.Type, _ bytes: [UInt8], or malformation: TokenRefusal.Malformation,
        twice: (String) -> TokenRefusal.Malformation
    ) throws(TokenRefusal) -> Members {
        // JSONScanner judges the whole text first, as RFC 8259 has it (UTF-8 to the last
        // byte), where JSONDecoder checks a string or a number only when it is read, and takes
        // UTF-16, a byte order mark and trailing commas. And a member read may not be given
        // twice (RFC 7515 §5.2 lets a recipient refuse that): JSONDecoder would take the
        // first, ECMAScript's JSON.parse and Foundation's untyped reader the last, so parsers
        // disagree on what the token says.
        do throws(JSONScanner.Failure) {
            _ = try JSONScanner.scan(bytes, watching: Members.names)
        } catch .duplicateMember(let name) {
            throw .malformed(twice(name))
        } catch {
            throw .malformed(malformation)
        }
        guard let read = try? JSONDecoder().decode(members, from: Data(bytes)) else { throw .malformed(malformation) }
        return read
    }

    /// A value that must be a string when present.
    private static func string(_ value: JSONValue?) throws(TokenRefusal) -> String? {
        guard let value else { return nil }
        guard let text = value.text else { throw .malformed(.claimType) }
        return text
    }

    /// A NumericDate (RFC 7519 §2): a finite number of seconds since 1970, when present; a
    /// JSON `true` or `false` is not one.
    private static func time(_ value: JSONValue?) throws(TokenRefusal) -> Double? {
        switch value {
        case nil: return nil
        case .number(let seconds) where seconds.isFinite: return seconds
        default: throw .malformed(.claimType)
        }
    }
}
