/// Why an App Attest attestation or assertion was refused: one case for each check that
/// can fail. `reason` words it for a client's error message (a JSON `status_message`); no
/// reason repeats a key, a challenge or any other byte of the input.
public enum AttestError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An input (named: `attestation`, `assertion`, `client data`) is longer than the
    /// verifier's limit in bytes; refused before any parsing or signature work.
    case tooLarge(input: String, limit: Int)
    /// The attestation or assertion is not well-formed CBOR within the reader's limits.
    case malformedCBOR(CBORError)
    /// Well-formed CBOR, but not the structure Apple's format has (a missing key, a value of
    /// the wrong type, authenticator data too short); the reason says what.
    case malformed(String)
    /// The attestation's `fmt` is not `apple-appattest`.
    case wrongFormat
    /// A certificate in `x5c` could not be read, or the leaf's key is not on P-256.
    case malformedCertificate(String)
    /// The certificates do not chain to a trusted root; libcrypto's reason.
    case untrustedChain(String)
    /// A certificate in the chain had expired at the time of verification.
    case certificateExpired
    /// A certificate in the chain was not yet valid at the time of verification.
    case certificateNotYetValid
    /// The leaf certificate's nonce is not SHA-256(authenticatorData ‖ SHA-256(clientData)):
    /// the attestation was made for other client data, or its authenticator data changed.
    case nonceMismatch
    /// The key identifier is not SHA-256 of the leaf certificate's public key.
    case keyIDMismatch
    /// The relying party ID hash names none of the apps the verifier accepts.
    case unknownApp
    /// An attestation whose signature counter is not 0.
    case counterNotZero
    /// An assertion whose counter is not greater than the last one accepted for its key: a replay.
    case counterNotIncreasing
    /// The AAGUID is neither App Attest's production nor its development value.
    case wrongAAGUID
    /// A development key (AAGUID `appattestdevelop`), and the verifier accepts production keys only.
    case developmentNotAllowed
    /// The attested credential ID is not the key identifier.
    case credentialIDMismatch
    /// The assertion's signature is not the key's over its authenticator data and client data.
    case badSignature
    /// The stored public key given to check an assertion is not an uncompressed P-256 point.
    case invalidPublicKey

    /// A short reason, such as `the attestation's nonce does not match its client data`.
    public var reason: String {
        switch self {
        case .tooLarge(let input, let limit): "the \(input) is longer than \(limit) bytes"
        case .malformedCBOR(let error): error.reason
        case .malformed(let what): what
        case .wrongFormat: "the attestation's format is not apple-appattest"
        case .malformedCertificate(let what): what
        case .untrustedChain(let why): "the attestation's certificates do not chain to a trusted root: \(why)"
        case .certificateExpired: "a certificate in the attestation's chain has expired"
        case .certificateNotYetValid: "a certificate in the attestation's chain is not yet valid"
        case .nonceMismatch: "the attestation's nonce does not match its client data"
        case .keyIDMismatch: "the key ID is not the attested key's"
        case .unknownApp: "the App ID is not one this server accepts"
        case .counterNotZero: "the attestation's counter is not zero"
        case .counterNotIncreasing: "the assertion's counter is not greater than the last one accepted"
        case .wrongAAGUID: "the AAGUID is not App Attest's"
        case .developmentNotAllowed: "a development key, and this server accepts production keys only"
        case .credentialIDMismatch: "the attested credential ID is not the key ID"
        case .badSignature: "the assertion's signature is not valid"
        case .invalidPublicKey: "the stored public key is not a P-256 point"
        }
    }

    public var description: String { reason }
}
