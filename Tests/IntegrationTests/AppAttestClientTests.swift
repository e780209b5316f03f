import AmodbAttest
import AmodbAttestTestSupport
import AmodbClient
import AmodbCrypto
import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

/// The app's side against the proxy itself: `AppAttestSession` over a device that stands in
/// for `DCAppAttestService` (`SyntheticAppAttest`, whose root the proxy trusts), and
/// `AmodbClient` with the session as its token provider, under `AMODB_PROOF=attested`.
@Suite(.timeLimit(.minutes(1)))
struct AppAttestClientTests {
    static let app = AppID(teamID: "ABCDE12345", bundleID: "com.example.movies")

    @Test func anAttestedSessionServesAClientOnASessionItAskedOnceAndABareClientIsRefused() async throws {
        let apple = try SyntheticAppAttest()
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("attest-root-\(UUID().uuidString).pem")
        let base64 = Data(apple.root.der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        try Data(("-----BEGIN CERTIFICATE-----\n" + base64 + "\n-----END CERTIFICATE-----\n").utf8).write(to: root)
        defer { try? FileManager.default.removeItem(at: root) }
        let proxy = try SandboxedProxy { configuration in
            configuration.attestApps = ["ABCDE12345.com.example.movies"]
            configuration.attestRootFile = root.path
            configuration.proof = .attested
        }
        try await withServer(proxy) { proxy in
            let device = SyntheticDevice(apple: apple, app: Self.app)
            let session = AppAttestSession(
                baseURL: proxy.harness.baseURL, provider: device, keyStore: InMemoryAttestationKeyStore())
            let client = AmodbClient(baseURL: proxy.harness.baseURL, tokenProvider: session.tokenProvider, timeout: 30)
            let week = try await client.trending(.movie, .week)
            #expect(!week.results.isEmpty)
            #expect(device.attestations == 1 && device.assertions == 1)
            // A second request reuses the session: no new assertion.
            _ = try await client.trending(.movie, .day)
            #expect(device.assertions == 1)
            let samples = try await proxy.harness.metrics()
            #expect(
                try samples.value("amodb_proxy_requests_by_proof_total", ["proof": "attested", "outcome": "served"])
                    == 2)
            // Without the session, the proxy refuses.
            let bare = AmodbClient(baseURL: proxy.harness.baseURL, timeout: 30)
            await #expect(throws: AmodbClientError.self) { _ = try await bare.trending(.movie, .week) }
        }
    }
}

/// A device whose `DCAppAttestService` is `SyntheticAppAttest`: it makes keys, attests them
/// and signs assertions with a counter that rises, as an iPhone's Secure Enclave does.
final class SyntheticDevice: AppAttestationProvider, @unchecked Sendable {
    private let apple: SyntheticAppAttest
    private let app: AppID
    private let lock = NSLock()
    private var keys: [String: SyntheticAppAttest.DeviceKey] = [:]
    private var counter: UInt32 = 0
    private(set) var attestations = 0
    private(set) var assertions = 0

    init(apple: SyntheticAppAttest, app: AppID) {
        self.apple = apple
        self.app = app
    }

    func generateKey() async throws -> String {
        let key = try SyntheticAppAttest.DeviceKey()
        let id = Data(key.keyID).base64EncodedString()
        lock.withLock { keys[id] = key }
        return id
    }

    func attestKey(_ keyID: String, clientDataHash: Data) async throws -> Data {
        let key = try lock.withLock { () throws -> SyntheticAppAttest.DeviceKey in
            guard let key = keys[keyID] else { throw AppAttestationInvalidKeyError() }
            attestations += 1
            return key
        }
        return Data(try apple.attestation(for: key, clientDataHash: Array(clientDataHash), appID: app))
    }

    func generateAssertion(_ keyID: String, clientDataHash: Data) async throws -> Data {
        let (key, count) = try lock.withLock { () throws -> (SyntheticAppAttest.DeviceKey, UInt32) in
            guard let key = keys[keyID] else { throw AppAttestationInvalidKeyError() }
            counter += 1
            assertions += 1
            return (key, counter)
        }
        return Data(
            try SyntheticAppAttest.assertion(by: key, clientDataHash: Array(clientDataHash), appID: app, counter: count)
        )
    }
}
