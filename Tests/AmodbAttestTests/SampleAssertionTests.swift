import AmodbAttest
import AmodbAttestTestSupport
import Testing

/// The assertions recorded on iPhones verify against their key, attested first, and each
/// is refused when replayed, changed, or checked for other client data, key or app.
/// Serialized: its cases build and check certificates, work that would otherwise take both
/// cores from every other suite at once (their in-process servers' answers wait on the same pool).
@Suite(.serialized) struct SampleAssertionTests {
    /// The sample's attested key, verified as a server would before any assertion.
    static func attestedKey(of sample: RecordedSample) throws -> AttestedKey {
        try SampleAttestationTests.verifier(for: sample).verifyAttestation(
            sample.attestation, keyID: sample.keyID, clientData: sample.attestationClientData, at: sample.attestedAt)
    }

    @Test(arguments: RecordedSample.names)
    func verifiesAgainstTheAttestedKeyWithAGreaterCounter(_ name: String) throws {
        let sample = try RecordedSample(named: name)
        let key = try Self.attestedKey(of: sample)
        let verifier = SampleAttestationTests.verifier(for: sample)
        let counter = try verifier.verifyAssertion(
            sample.assertion, clientData: sample.assertionClientData, publicKey: key.publicKey, previousCounter: 0,
            appID: key.appID)
        #expect(counter == sample.counter)
        let withoutApp = try verifier.verifyAssertion(
            sample.assertion, clientData: sample.assertionClientData, publicKey: key.publicKey, previousCounter: 0)
        #expect(withoutApp == sample.counter, "any accepted app")
    }

    /// One change to a recorded assertion, or to what it is verified with, and the refusal
    /// it must meet.
    enum Change: String, CaseIterable, CustomTestStringConvertible {
        case replayed, replayedAfterALaterOne, signatureByte, signatureTooLong, otherClientData, counterInTheData
        case relyingPartyIDHashByte, anotherApp, notTheKeysApp, anotherKey, notAPoint, authenticatorDataTruncated

        var testDescription: String { rawValue }

        /// The refusal this change must meet.
        var expected: AttestError {
            switch self {
            case .replayed, .replayedAfterALaterOne: .counterNotIncreasing
            case .signatureByte, .signatureTooLong, .otherClientData, .counterInTheData, .anotherKey: .badSignature
            case .relyingPartyIDHashByte, .anotherApp, .notTheKeysApp: .unknownApp
            case .notAPoint: .invalidPublicKey
            case .authenticatorDataTruncated: .malformed("the assertion's authenticator data is too short")
            }
        }
    }

    @Test(arguments: RecordedSample.names, Change.allCases)
    func isRefusedWhenReplayedOrChanged(_ name: String, _ change: Change) throws {
        let sample = try RecordedSample(named: name)
        let key = try Self.attestedKey(of: sample)
        var assertion = sample.assertion
        var clientData = sample.assertionClientData
        var publicKey = key.publicKey
        var previousCounter: UInt32 = 0
        var appID: AppID? = key.appID
        var verifier = SampleAttestationTests.verifier(for: sample)
        let other = AppID(teamID: sample.appID.teamID, bundleID: sample.appID.bundleID + ".other")
        switch change {
        case .replayed:
            previousCounter = sample.counter
        case .replayedAfterALaterOne:
            previousCounter = sample.counter + 5
        case .signatureByte:
            assertion = try AttestationEditing.changingBytes(assertion, at: "signature") { $0[$0.count - 3] ^= 0x01 }
        case .signatureTooLong:
            assertion = try AttestationEditing.changingBytes(assertion, at: "signature") {
                $0 += [UInt8](repeating: 0, count: 80)
            }
        case .otherClientData:
            clientData += [0x21]
        case .counterInTheData:
            assertion = try AttestationEditing.changingBytes(assertion, at: "authenticatorData") { $0[36] &+= 1 }
        case .relyingPartyIDHashByte:
            assertion = try AttestationEditing.changingBytes(assertion, at: "authenticatorData") { $0[3] ^= 0x01 }
        case .anotherApp:
            verifier = AppAttestVerifier(appIDs: [other], allowDevelopment: true)
            appID = nil
        case .notTheKeysApp:
            verifier = AppAttestVerifier(appIDs: [sample.appID, other], allowDevelopment: true)
            appID = other
        case .anotherKey:
            let otherName = try #require(RecordedSample.names.first { $0 != name })
            publicKey = try Self.attestedKey(of: RecordedSample(named: otherName)).publicKey
        case .notAPoint:
            publicKey[64] ^= 0x01
        case .authenticatorDataTruncated:
            assertion = try AttestationEditing.changingBytes(assertion, at: "authenticatorData") { $0.removeLast() }
        }
        #expect(throws: change.expected) {
            try verifier.verifyAssertion(
                assertion, clientData: clientData, publicKey: publicKey, previousCounter: previousCounter,
                appID: appID)
        }
    }

    @Test func anAssertionLongerThanTheLimitIsRefusedBeforeItIsRead() throws {
        let verifier = AppAttestVerifier(appIDs: [], allowDevelopment: true)
        let limit = verifier.limits.maximumAssertionBytes
        #expect(throws: AttestError.tooLarge(input: "assertion", limit: limit)) {
            try verifier.verifyAssertion(
                [UInt8](repeating: 0xFF, count: limit + 1), clientData: [], publicKey: [], previousCounter: 0)
        }
    }

    @Test func malformedAssertionsAreRefusedWithTheReaderReason() throws {
        let sample = try RecordedSample(named: RecordedSample.names[0])
        let key = try Self.attestedKey(of: sample)
        let verifier = SampleAttestationTests.verifier(for: sample)
        func refusal(_ bytes: [UInt8]) -> AttestError? {
            do {
                _ = try verifier.verifyAssertion(bytes, clientData: [], publicKey: key.publicKey, previousCounter: 0)
                return nil
            } catch { return error }
        }
        #expect(refusal(Array(sample.assertion.dropLast())) == .malformedCBOR(.truncated))
        #expect(refusal(sample.assertion + [0x00]) == .malformedCBOR(.trailingBytes))
        #expect(refusal([0xA1, 0x00, 0x00]) == .malformedCBOR(.nonTextKey))
        #expect(refusal([0xA0]) == .malformed("the assertion has no signature bytes"))
        let withoutData = try AttestationEditing.changing(sample.assertion) { $0["authenticatorData"] = nil }
        #expect(refusal(withoutData) == .malformed("the assertion has no authenticatorData bytes"))
    }
}
