public import Foundation

/// What the device does for App Attest: makes a key in its Secure Enclave, has Apple attest
/// it, and signs assertions with it.
///
/// ``DeviceCheckAttestation`` is the provider on Apple devices (`DCAppAttestService`); tests
/// give one of their own. A provider keeps no state of its own: the key's id is kept by an
/// ``AppAttestationKeyStore``, and ``AppAttestSession`` decides when each call is made (a key
/// is made and attested once, an assertion is asked once per session). The client data each
/// call signs is the proxy's one-time challenge, so `clientDataHash` is always
/// SHA-256 of the challenge text's UTF-8 bytes.
public protocol AppAttestationProvider: Sendable {
    /// Makes a new key and returns its id: standard base64 of the key id's bytes, as
    /// `DCAppAttestService.generateKey()` returns it and as the proxy expects it.
    /// Throws ``AppAttestationUnsupportedError`` where App Attest is not available.
    func generateKey() async throws -> String

    /// Apple's attestation of the key `keyID` over `clientDataHash`: the attestation object
    /// `DCAppAttestService.attestKey(_:clientDataHash:)` returns (CBOR).
    func attestKey(_ keyID: String, clientDataHash: Data) async throws -> Data

    /// An assertion by the key `keyID` over `clientDataHash`: what
    /// `DCAppAttestService.generateAssertion(_:clientDataHash:)` returns (CBOR).
    /// Throws ``AppAttestationInvalidKeyError`` when the device no longer has the key (the
    /// app was reinstalled, or the device restored), so that a new one is made.
    func generateAssertion(_ keyID: String, clientDataHash: Data) async throws -> Data
}

/// Thrown by an ``AppAttestationProvider`` where App Attest is not available: a simulator,
/// an older device, or a platform without it. Not worth retrying on this device.
public struct AppAttestationUnsupportedError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Makes the error.
    public init() {}

    /// What an ``AmodbClientError`` built from it says.
    public var description: String { "App Attest is not supported on this device" }
}

/// Thrown by an ``AppAttestationProvider`` when the device no longer has the key it was
/// asked to use: App Attest keys do not survive reinstalling the app or restoring the
/// device, while the id kept for one may. ``AppAttestSession`` then makes and attests a new key.
public struct AppAttestationInvalidKeyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Makes the error.
    public init() {}

    /// What an ``AmodbClientError`` built from it says.
    public var description: String { "the device no longer has the App Attest key" }
}
