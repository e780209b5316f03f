import AmodbAttest
import AmodbAttestTestSupport
import AmodbCrypto
import Foundation
import Testing

/// The attestations recorded on iPhones verify against Apple's real root at the time each
/// was made, and each is refused when any one field it is checked by changes.
/// Serialized: its cases build and check certificates, work that would otherwise take both
/// cores from every other suite at once (their in-process servers' answers wait on the same pool).
@Suite(.serialized) struct SampleAttestationTests {
    /// A DER SubjectPublicKeyInfo for a P-256 key, up to its point: SEQUENCE { SEQUENCE {
    /// id-ecPublicKey, prime256v1 }, BIT STRING (0 unused bits) }.
    static let p256PublicKeyInfoPrefix: [UInt8] = [
        0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01, 0x06, 0x08, 0x2A, 0x86, 0x48,
        0xCE, 0x3D, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
    ]

    /// A verifier for the sample's app, accepting development keys, trusting Apple's root.
    static func verifier(for sample: RecordedSample, allowDevelopment: Bool = true) -> AppAttestVerifier {
        AppAttestVerifier(appIDs: [sample.appID], allowDevelopment: allowDevelopment)
    }

    @Test(arguments: RecordedSample.names)
    func verifiesAtItsTimestampAgainstApplesRoot(_ name: String) throws {
        let sample = try RecordedSample(named: name)
        let key = try Self.verifier(for: sample).verifyAttestation(
            sample.attestation, keyID: sample.keyID, clientData: sample.attestationClientData, at: sample.attestedAt)
        #expect(key.keyID == sample.keyID)
        #expect(key.publicKey.count == 65 && key.publicKey.first == 0x04)
        #expect(Self.p256PublicKeyInfoPrefix + key.publicKey == sample.publicKeyInfo, "the recording's publicKey")
        #expect(SHA256.hash(key.publicKey) == sample.keyID)
        #expect(key.appID == sample.appID)
        #expect(key.environment == .development)
        #expect(key.receipt.count > 1000, "Apple's PKCS #7 receipt")
    }

    @Test(arguments: RecordedSample.names)
    func verifiesWhenItsAppIsOneOfSeveral(_ name: String) throws {
        let sample = try RecordedSample(named: name)
        let other = AppID(teamID: "ABCDE12345", bundleID: "com.example.other")
        let verifier = AppAttestVerifier(appIDs: [other, sample.appID], allowDevelopment: true)
        let key = try verifier.verifyAttestation(
            sample.attestation, keyID: sample.keyID, clientData: sample.attestationClientData, at: sample.attestedAt)
        #expect(key.appID == sample.appID)
    }

    /// One change to a recorded attestation, or to what it is verified with, and the refusal
    /// it must meet.
    enum Change: String, CaseIterable, CustomTestStringConvertible {
        case relyingPartyIDHashByte, otherTeamID, otherClientData, nonceByteInTheLeaf, otherKeyID
        case credentialIDByte, keyIDAndCredentialIDTogether, counterNotZero, aaguidByte, developmentNotAllowed
        case leafSignatureByte, intermediateSignatureByte, intermediateMissing, intermediateNotACertificate
        case leafOnlyAsRoot, timeAfterTheLeafExpired, timeBeforeTheLeafWasValid
        case anotherRoot, format, authenticatorDataTruncated, receiptMissing

        var testDescription: String { rawValue }

        /// Whether `error` is the refusal this change must meet.
        func isExpected(_ error: AttestError) -> Bool {
            switch (self, error) {
            case (.relyingPartyIDHashByte, .unknownApp), (.otherTeamID, .unknownApp): true
            case (.otherClientData, .nonceMismatch), (.nonceByteInTheLeaf, .nonceMismatch): true
            case (.otherKeyID, .credentialIDMismatch), (.credentialIDByte, .credentialIDMismatch): true
            case (.keyIDAndCredentialIDTogether, .keyIDMismatch): true
            case (.counterNotZero, .counterNotZero): true
            case (.aaguidByte, .wrongAAGUID): true
            case (.developmentNotAllowed, .developmentNotAllowed): true
            case (.leafSignatureByte, .untrustedChain), (.intermediateSignatureByte, .untrustedChain): true
            case (.intermediateMissing, .untrustedChain), (.leafOnlyAsRoot, .untrustedChain): true
            case (.anotherRoot, .untrustedChain): true
            case (.intermediateNotACertificate, .malformedCertificate): true
            case (.timeAfterTheLeafExpired, .certificateExpired): true
            case (.timeBeforeTheLeafWasValid, .certificateNotYetValid): true
            case (.format, .wrongFormat): true
            case (.authenticatorDataTruncated, .malformed), (.receiptMissing, .malformed): true
            default: false
            }
        }
    }

    @Test(arguments: RecordedSample.names, Change.allCases)
    func isRefusedWhenOneCheckedFieldChanges(_ name: String, _ change: Change) throws {
        let sample = try RecordedSample(named: name)
        var attestation = sample.attestation
        var keyID = sample.keyID
        var clientData = sample.attestationClientData
        var time = sample.attestedAt
        var verifier = Self.verifier(for: sample)
        let offsets = AttestationEditing.AuthenticatorDataOffset.self
        func changeAuthenticatorData(_ change: (inout [UInt8]) -> Void) throws {
            attestation = try AttestationEditing.changingBytes(attestation, at: "authData") { change(&$0) }
        }
        func changeStatement(_ change: (inout [String: CBORValue]) -> Void) throws {
            attestation = try AttestationEditing.changing(attestation) { map in
                guard var statement = map["attStmt"]?.map else { return }
                change(&statement)
                map["attStmt"] = .map(statement)
            }
        }
        switch change {
        case .relyingPartyIDHashByte:
            try changeAuthenticatorData { $0[offsets.relyingPartyIDHash.lowerBound + 7] ^= 0x01 }
        case .otherTeamID:
            let app = AppID(teamID: "ABCDE12345", bundleID: sample.appID.bundleID)
            verifier = AppAttestVerifier(appIDs: [app], allowDevelopment: true)
        case .otherClientData:
            clientData[0] ^= 0x01
        case .nonceByteInTheLeaf:
            let authenticatorData = try #require(CBORReader().read(attestation).map?["authData"]?.bytes)
            let nonce = SHA256.hash(authenticatorData + SHA256.hash(clientData))
            attestation = try AttestationEditing.changingCertificates(attestation) { chain in
                let range = try #require(
                    AttestationEditing.firstRange(of: nonce, in: chain[0]), "the nonce in the leaf")
                chain[0] = AttestationEditing.flipping(chain[0], at: range.lowerBound + 3)
            }
        case .otherKeyID:
            keyID[5] ^= 0x01
        case .credentialIDByte:
            try changeAuthenticatorData { $0[offsets.credentialID.lowerBound + 5] ^= 0x01 }
        case .keyIDAndCredentialIDTogether:
            keyID[5] ^= 0x01
            try changeAuthenticatorData { $0[offsets.credentialID.lowerBound + 5] ^= 0x01 }
        case .counterNotZero:
            try changeAuthenticatorData { $0[offsets.signCount.upperBound - 1] = 1 }
        case .aaguidByte:
            try changeAuthenticatorData { $0[offsets.aaguid.lowerBound + 2] ^= 0x20 }
        case .developmentNotAllowed:
            verifier = Self.verifier(for: sample, allowDevelopment: false)
        case .leafSignatureByte:
            attestation = try AttestationEditing.changingCertificates(attestation) { chain in
                chain[0] = AttestationEditing.flipping(chain[0], at: chain[0].count - 2)
            }
        case .intermediateSignatureByte:
            attestation = try AttestationEditing.changingCertificates(attestation) { chain in
                chain[1] = AttestationEditing.flipping(chain[1], at: chain[1].count - 2)
            }
        case .intermediateMissing:
            attestation = try AttestationEditing.changingCertificates(attestation) { $0.removeLast() }
        case .intermediateNotACertificate:
            attestation = try AttestationEditing.changingCertificates(attestation) {
                $0[1] = [0x30, 0x03, 0x02, 0x01, 0x01]
            }
        case .leafOnlyAsRoot:
            let leaf = try X509Certificate(der: AttestationEditing.certificates(of: attestation)[0])
            verifier = AppAttestVerifier(
                appIDs: [sample.appID], allowDevelopment: true, trustedRoots: TrustedRoots([leaf]))
        case .timeAfterTheLeafExpired:
            time = sample.attestedAt.addingTimeInterval(4 * 86_400)
        case .timeBeforeTheLeafWasValid:
            time = sample.attestedAt.addingTimeInterval(-2 * 86_400)
        case .anotherRoot:
            let other = try SyntheticAppAttest(now: sample.attestedAt)
            verifier = AppAttestVerifier(
                appIDs: [sample.appID], allowDevelopment: true, trustedRoots: other.trustedRoots)
        case .format:
            attestation = try AttestationEditing.changing(attestation) { $0["fmt"] = .text("packed") }
        case .authenticatorDataTruncated:
            try changeAuthenticatorData { $0.removeLast($0.count - 60) }
        case .receiptMissing:
            try changeStatement { $0["receipt"] = nil }
        }
        let error = #expect(throws: AttestError.self) {
            try verifier.verifyAttestation(attestation, keyID: keyID, clientData: clientData, at: time)
        }
        #expect(error.map(change.isExpected) == true, "refused for \(error.map(\.reason) ?? "nothing")")
    }

    @Test(arguments: RecordedSample.names)
    func rewritingTheCBORUnchangedChangesNoByte(_ name: String) throws {
        let sample = try RecordedSample(named: name)
        #expect(CBORWriter.encode(try CBORReader().read(sample.attestation)) == sample.attestation)
        #expect(CBORWriter.encode(try CBORReader().read(sample.assertion)) == sample.assertion)
    }

    @Test(arguments: RecordedSample.names)
    func theLeafCarriesTheNonceAndTheKey(_ name: String) throws {
        let sample = try RecordedSample(named: name)
        let certificates = try AttestationEditing.certificates(of: sample.attestation)
        #expect(certificates.count == 2, "Apple's leaf and intermediate")
        let leaf = try X509Certificate(der: certificates[0])
        let authenticatorData = try #require(CBORReader().read(sample.attestation).map?["authData"]?.bytes)
        let nonce = SHA256.hash(authenticatorData + SHA256.hash(sample.attestationClientData))
        #expect(try leaf.extensionValue(oid: NonceExtensionDER.oid) == NonceExtensionDER.value(nonce: nonce))
        #expect(try leaf.extensionValue(oid: "1.2.3.4") == nil)
        #expect(leaf.p256PublicKeyPoint.map { Self.p256PublicKeyInfoPrefix + $0 } == sample.publicKeyInfo)
        let intermediate = try X509Certificate(der: certificates[1])
        #expect(intermediate.p256PublicKeyPoint == nil, "Apple's intermediate has a P-384 key")
    }

    @Test func anAttestationLongerThanTheLimitIsRefusedBeforeItIsRead() throws {
        let verifier = AppAttestVerifier(appIDs: [], allowDevelopment: true)
        let limit = verifier.limits.maximumAttestationBytes
        // 0xFF is a CBOR "break" with nothing to end: read, it would be malformed.
        #expect(throws: AttestError.tooLarge(input: "attestation", limit: limit)) {
            try verifier.verifyAttestation(
                [UInt8](repeating: 0xFF, count: limit + 1), keyID: [], clientData: [], at: Date())
        }
        #expect(throws: AttestError.tooLarge(input: "client data", limit: verifier.limits.maximumClientDataBytes)) {
            try verifier.verifyAttestation(
                [0xA0], keyID: [], clientData: [UInt8](repeating: 0, count: verifier.limits.maximumClientDataBytes + 1),
                at: Date())
        }
    }

    @Test func malformedAttestationsAreRefusedWithTheReaderReason() throws {
        let verifier = AppAttestVerifier(appIDs: [], allowDevelopment: true)
        func refusal(_ bytes: [UInt8]) -> AttestError? {
            do {
                _ = try verifier.verifyAttestation(bytes, keyID: [], clientData: [], at: Date())
                return nil
            } catch { return error }
        }
        #expect(refusal([]) == .malformedCBOR(.truncated))
        #expect(refusal([0xA1, 0x63, 0x66, 0x6D, 0x74]) == .malformedCBOR(.truncated))
        #expect(refusal([0xBF, 0xFF]) == .malformedCBOR(.indefiniteLength))
        #expect(refusal([0xA0, 0x00]) == .malformedCBOR(.trailingBytes))
        #expect(refusal([0x80]) == .malformed("the attestation is not a CBOR map"))
        #expect(refusal([0xA0]) == .malformed("the attestation has no text fmt"))
        let deep = [UInt8](repeating: 0x81, count: 9) + [0x00]
        #expect(refusal(deep) == .malformedCBOR(.tooDeep(limit: 8)))
    }
}
