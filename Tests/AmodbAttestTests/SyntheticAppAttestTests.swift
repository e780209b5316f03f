import AmodbAttest
import AmodbAttestTestSupport
import AmodbCrypto
import Foundation
import Testing

/// Attestations and assertions made here, with a root and an intermediate made at run
/// time, verify when that root is trusted, by the same checks Apple's meet; and what is
/// wrong with a chain (another root, a leaf out of its validity) is refused.
/// Serialized: its cases build and check certificates, work that would otherwise take both
/// cores from every other suite at once (their in-process servers' answers wait on the same pool).
@Suite(.serialized) struct SyntheticAppAttestTests {
    static let app = AppID(teamID: "ABCDE12345", bundleID: "com.example.amodb")
    static let challenge = Array("one-time challenge 7f3a".utf8)

    @Test func anAttestationAndItsAssertionsVerifyWhenItsRootIsTrusted() throws {
        let service = try SyntheticAppAttest()
        let device = try SyntheticAppAttest.DeviceKey()
        let verifier = AppAttestVerifier(
            appIDs: [Self.app], allowDevelopment: false, trustedRoots: service.trustedRoots)
        let attestation = try service.attestation(for: device, clientData: Self.challenge, appID: Self.app)
        let key = try verifier.verifyAttestation(
            attestation, keyID: device.keyID, clientData: Self.challenge, at: Date())
        #expect(key.keyID == device.keyID)
        #expect(key.publicKey == device.publicKey)
        #expect(key.appID == Self.app)
        #expect(key.environment == .production)
        #expect(key.receipt == Array("synthetic receipt".utf8))

        var counter: UInt32 = 0
        for request in 1...3 {
            let clientData = Array("request \(request)".utf8)
            let assertion = try SyntheticAppAttest.assertion(
                by: device, clientData: clientData, appID: Self.app, counter: counter + 1)
            let accepted = try verifier.verifyAssertion(
                assertion, clientData: clientData, publicKey: key.publicKey, previousCounter: counter, appID: key.appID)
            #expect(accepted == counter + 1)
            #expect(throws: AttestError.counterNotIncreasing) {
                try verifier.verifyAssertion(
                    assertion, clientData: clientData, publicKey: key.publicKey, previousCounter: accepted)
            }
            counter = accepted
        }
    }

    @Test func aDevelopmentKeyVerifiesOnlyWhereDevelopmentIsAllowed() throws {
        let service = try SyntheticAppAttest()
        let device = try SyntheticAppAttest.DeviceKey()
        var options = SyntheticAppAttest.AttestationOptions()
        options.environment = .development
        let attestation = try service.attestation(
            for: device, clientData: Self.challenge, appID: Self.app, options: options)
        let allowing = AppAttestVerifier(appIDs: [Self.app], allowDevelopment: true, trustedRoots: service.trustedRoots)
        let key = try allowing.verifyAttestation(
            attestation, keyID: device.keyID, clientData: Self.challenge, at: Date())
        #expect(key.environment == .development)
        let refusing = AppAttestVerifier(
            appIDs: [Self.app], allowDevelopment: false, trustedRoots: service.trustedRoots)
        #expect(throws: AttestError.developmentNotAllowed) {
            try refusing.verifyAttestation(attestation, keyID: device.keyID, clientData: Self.challenge, at: Date())
        }
    }

    @Test func aChainToAnotherRootIsRefused() throws {
        let service = try SyntheticAppAttest()
        let impostor = try SyntheticAppAttest()  // a root of the same name with another key
        let device = try SyntheticAppAttest.DeviceKey()
        let attestation = try impostor.attestation(for: device, clientData: Self.challenge, appID: Self.app)
        for roots in [service.trustedRoots, .appleAppAttestation] {
            let verifier = AppAttestVerifier(appIDs: [Self.app], allowDevelopment: false, trustedRoots: roots)
            let error = #expect(throws: AttestError.self) {
                try verifier.verifyAttestation(attestation, keyID: device.keyID, clientData: Self.challenge, at: Date())
            }
            guard case .untrustedChain(let reason) = error else {
                Issue.record("refused for \(String(describing: error))")
                continue
            }
            #expect(!reason.isEmpty)
        }
    }

    @Test func aLeafOutOfItsValidityIsRefused() throws {
        let now = Date()
        let service = try SyntheticAppAttest(
            validity: now.addingTimeInterval(-30 * 86_400)...now.addingTimeInterval(86_400 * 365))
        let device = try SyntheticAppAttest.DeviceKey()
        let verifier = AppAttestVerifier(
            appIDs: [Self.app], allowDevelopment: false, trustedRoots: service.trustedRoots)
        var options = SyntheticAppAttest.AttestationOptions()
        options.leafValidity = now.addingTimeInterval(-10 * 86_400)...now.addingTimeInterval(-7 * 86_400)
        let expired = try service.attestation(
            for: device, clientData: Self.challenge, appID: Self.app, options: options)
        #expect(throws: AttestError.certificateExpired) {
            try verifier.verifyAttestation(expired, keyID: device.keyID, clientData: Self.challenge, at: now)
        }
        #expect(
            try verifier.verifyAttestation(
                expired, keyID: device.keyID, clientData: Self.challenge, at: now.addingTimeInterval(-8 * 86_400)
            ).keyID == device.keyID, "valid at a time within its validity")

        options.leafValidity = now.addingTimeInterval(86_400)...now.addingTimeInterval(4 * 86_400)
        let early = try service.attestation(for: device, clientData: Self.challenge, appID: Self.app, options: options)
        #expect(throws: AttestError.certificateNotYetValid) {
            try verifier.verifyAttestation(early, keyID: device.keyID, clientData: Self.challenge, at: now)
        }
    }

    @Test func aRootOutOfItsValidityIsRefused() throws {
        let now = Date()
        let service = try SyntheticAppAttest(
            validity: now.addingTimeInterval(-30 * 86_400)...now.addingTimeInterval(-86_400))
        let device = try SyntheticAppAttest.DeviceKey()
        let attestation = try service.attestation(for: device, clientData: Self.challenge, appID: Self.app)
        let verifier = AppAttestVerifier(
            appIDs: [Self.app], allowDevelopment: false, trustedRoots: service.trustedRoots)
        #expect(throws: AttestError.certificateExpired) {
            try verifier.verifyAttestation(attestation, keyID: device.keyID, clientData: Self.challenge, at: now)
        }
    }

    /// An option changed from a genuine attestation's, and the refusal it must meet.
    struct Change: Sendable, CustomTestStringConvertible {
        let name: String
        let change: @Sendable (inout SyntheticAppAttest.AttestationOptions) -> Void
        let expected: AttestError
        var testDescription: String { name }
    }

    static let changes: [Change] = [
        Change(name: "a counter of 1", change: { $0.signCount = 1 }, expected: .counterNotZero),
        Change(name: "another AAGUID", change: { $0.aaguid = Array("appattestXXXXXXX".utf8) }, expected: .wrongAAGUID),
        Change(
            name: "a credential ID of 31 bytes", change: { $0.credentialID = [UInt8](repeating: 1, count: 31) },
            expected: .credentialIDMismatch),
        Change(name: "the packed format", change: { $0.format = "packed" }, expected: .wrongFormat),
    ]

    @Test(arguments: changes)
    func anAttestationWithOneOptionChangedIsRefused(_ change: Change) throws {
        let service = try SyntheticAppAttest()
        let device = try SyntheticAppAttest.DeviceKey()
        var options = SyntheticAppAttest.AttestationOptions()
        change.change(&options)
        let attestation = try service.attestation(
            for: device, clientData: Self.challenge, appID: Self.app, options: options)
        let verifier = AppAttestVerifier(appIDs: [Self.app], allowDevelopment: true, trustedRoots: service.trustedRoots)
        #expect(throws: change.expected) {
            try verifier.verifyAttestation(attestation, keyID: device.keyID, clientData: Self.challenge, at: Date())
        }
    }

    @Test func anotherDevicesKeyIDOrAnotherAppIsRefused() throws {
        let service = try SyntheticAppAttest()
        let device = try SyntheticAppAttest.DeviceKey()
        let other = try SyntheticAppAttest.DeviceKey()
        let attestation = try service.attestation(for: device, clientData: Self.challenge, appID: Self.app)
        let verifier = AppAttestVerifier(
            appIDs: [Self.app], allowDevelopment: false, trustedRoots: service.trustedRoots)
        #expect(throws: AttestError.credentialIDMismatch) {
            try verifier.verifyAttestation(attestation, keyID: other.keyID, clientData: Self.challenge, at: Date())
        }
        #expect(throws: AttestError.nonceMismatch) {
            try verifier.verifyAttestation(
                attestation, keyID: device.keyID, clientData: Self.challenge + [0], at: Date())
        }
        let elsewhere = AppAttestVerifier(
            appIDs: [AppID(teamID: "ABCDE12345", bundleID: "com.example.other")], allowDevelopment: false,
            trustedRoots: service.trustedRoots)
        #expect(throws: AttestError.unknownApp) {
            try elsewhere.verifyAttestation(attestation, keyID: device.keyID, clientData: Self.challenge, at: Date())
        }
        let assertion = try SyntheticAppAttest.assertion(by: other, clientData: [1], appID: Self.app, counter: 1)
        #expect(throws: AttestError.badSignature) {
            try verifier.verifyAssertion(assertion, clientData: [1], publicKey: device.publicKey, previousCounter: 0)
        }
    }

    @Test func verifiesFromManyTasksAtOnce() async throws {
        let service = try SyntheticAppAttest()
        let verifier = AppAttestVerifier(
            appIDs: [Self.app], allowDevelopment: false, trustedRoots: service.trustedRoots)
        let devices = try (0..<4).map { _ in try SyntheticAppAttest.DeviceKey() }
        let attestations = try devices.map {
            try service.attestation(for: $0, clientData: Self.challenge, appID: Self.app)
        }
        let verified = await withTaskGroup(of: Bool.self) { group in
            for round in 0..<32 {
                let index = round % devices.count
                group.addTask {
                    let key = try? verifier.verifyAttestation(
                        attestations[index], keyID: devices[index].keyID, clientData: Self.challenge, at: Date())
                    return key?.publicKey == devices[index].publicKey
                }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(verified == 32)
    }
}
