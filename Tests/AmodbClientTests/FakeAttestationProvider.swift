import AmodbClient
import Foundation

/// A device for App Attest tests: keys are names, and each attestation or assertion is
/// text naming what it proves (`attestation|<key>|<hex of the client data hash>`), which
/// ``AttestStandIn`` checks. It records every call with the hash it was given, and can be
/// told that App Attest is unsupported, or that it lost a key.
final class FakeAttestationProvider: AppAttestationProvider {
    /// One call, as the session made it.
    struct Call: Sendable, Equatable {
        /// `generateKey`, `attestKey` or `generateAssertion`.
        let method: String
        let keyID: String
        let clientDataHash: Data?
    }

    private struct State {
        var calls: [Call] = []
        var keysMade = 0
        var unsupported = false
        var lostKeys: Set<String> = []
    }

    private let state = Locked(State())

    /// Every call, in order.
    var calls: [Call] { state.current.calls }

    /// The calls of one method, in order.
    func calls(_ method: String) -> [Call] { calls.filter { $0.method == method } }

    /// From now on, App Attest is unsupported here.
    func setUnsupported() {
        state.withLock { $0.unsupported = true }
    }

    /// From now on, the device no longer has `keyID`.
    func lose(_ keyID: String) {
        state.withLock { _ = $0.lostKeys.insert(keyID) }
    }

    /// What the stand-in expects as the proof of `kind` for `keyID` over `clientDataHash`.
    static func proof(_ kind: String, keyID: String, clientDataHash: Data) -> String {
        "\(kind)|\(keyID)|" + clientDataHash.map { String(format: "%02x", $0) }.joined()
    }

    func generateKey() async throws -> String {
        try state.withLock { state in
            if state.unsupported { throw AppAttestationUnsupportedError() }
            state.keysMade += 1
            // Standard base64 of the key id's bytes, as DCAppAttestService gives it.
            let keyID = Data("device key \(state.keysMade) ??>".utf8).base64EncodedString()
            state.calls.append(Call(method: "generateKey", keyID: keyID, clientDataHash: nil))
            return keyID
        }
    }

    func attestKey(_ keyID: String, clientDataHash: Data) async throws -> Data {
        state.withLock { $0.calls.append(Call(method: "attestKey", keyID: keyID, clientDataHash: clientDataHash)) }
        return Data(Self.proof("attestation", keyID: keyID, clientDataHash: clientDataHash).utf8)
    }

    func generateAssertion(_ keyID: String, clientDataHash: Data) async throws -> Data {
        try state.withLock { state in
            state.calls.append(Call(method: "generateAssertion", keyID: keyID, clientDataHash: clientDataHash))
            if state.lostKeys.contains(keyID) { throw AppAttestationInvalidKeyError() }
        }
        return Data(Self.proof("assertion", keyID: keyID, clientDataHash: clientDataHash).utf8)
    }
}
