import AmodbAttest
import AmodbAttestTestSupport
import AmodbCrypto
import AmodbProxy
import AmodbRedis
import AmodbRedisTestSupport
import AmodbTestSupport
import Foundation
import Testing

/// App Attest end to end, against two replicas sharing a real Redis: a challenge from one is
/// good on the other (once), a key attested on one is known to the other, a session token
/// one signs is accepted by the other, and an assertion replayed on either is refused.
/// Apple's service is stood in for by `SyntheticAppAttest`, whose root the replicas trust
/// (`AMODB_ATTEST_ROOT_FILE`), exactly as they would trust Apple's.
@Suite(
    .enabled(if: RedisServer.isInstalled, Comment(rawValue: RedisServer.notInstalledMessage)), .timeLimit(.minutes(2)))
struct AppAttestFleetTests {
    static let app = AppID(teamID: "ABCDE12345", bundleID: "com.example.movies")

    @Test func aChallengeAKeyASessionAndAServedRequestAcrossTwoReplicasAndAReplayRefusedOnBoth() async throws {
        try await withAttestFleet(mode: .enforce) { fleet, apple in
            let device = try SyntheticAppAttest.DeviceKey()
            // Without a proof: refused, saying what is needed.
            let bare = try await fleet[0].get("/3/movie/550")
            #expect(bare.status == 401)
            #expect(bare.text.contains("App Attest session"), "\(bare.text)")

            let challenge = try await Self.challenge(from: fleet[0])
            let attestation = try apple.attestation(for: device, clientData: Array(challenge.utf8), appID: Self.app)
            let keys = try await fleet[1].post(
                "/attest/keys",
                body: Self.json(["key_id": device.keyID, "attestation": attestation], challenge: challenge))
            #expect(keys.status == 201, "\(keys.text)")
            #expect(keys.text.contains(#""environment":"production""#))
            // The challenge was taken: it cannot be used again, on either replica.
            let again = try await fleet[0].post(
                "/attest/keys",
                body: Self.json(["key_id": device.keyID, "attestation": attestation], challenge: challenge))
            #expect(again.status == 401)
            #expect(again.text.contains("challenge is unknown, used or expired"))

            let sessionChallenge = try await Self.challenge(from: fleet[1])
            let assertion = try SyntheticAppAttest.assertion(
                by: device, clientData: Array(sessionChallenge.utf8), appID: Self.app, counter: 1)
            let session = try await fleet[0].post(
                "/attest/session",
                body: Self.json(["key_id": device.keyID, "assertion": assertion], challenge: sessionChallenge))
            #expect(session.status == 200, "\(session.text)")
            let token = try #require(Self.field("token", in: session.text))
            #expect(token.hasPrefix("as1."))

            // The session token, signed by one replica, is good on the other.
            let served = try await fleet[1].get("/3/movie/550", headers: ["Authorization": "Bearer \(token)"])
            #expect(served.status == 200, "\(served.text)")
            let samples = try await fleet[1].metrics()
            #expect(
                try samples.value("amodb_proxy_requests_by_proof_total", ["proof": "attested", "outcome": "served"])
                    == 1)

            // The same assertion again, over a fresh challenge, on the other replica: its counter
            // is not above the one kept, fleet-wide.
            let replayChallenge = try await Self.challenge(from: fleet[0])
            let replayed = try SyntheticAppAttest.assertion(
                by: device, clientData: Array(replayChallenge.utf8), appID: Self.app, counter: 1)
            let refused = try await fleet[1].post(
                "/attest/session",
                body: Self.json(["key_id": device.keyID, "assertion": replayed], challenge: replayChallenge))
            #expect(refused.status == 401)
            #expect(refused.text.contains("counter"), "\(refused.text)")

            // A token altered, or one for a key signed with another secret: refused.
            let altered = try await fleet[0].get(
                "/3/movie/550", headers: ["Authorization": "Bearer " + token.dropLast(2) + "AA"])
            #expect(altered.status == 401)
            #expect(altered.header("WWW-Authenticate")?.contains("invalid_token") == true)
        }
    }

    @Test func aKeyTheProxyDoesNotKnowIsToldToAttestAgainWithItsCode() async throws {
        try await withAttestFleet(mode: .enforce) { fleet, _ in
            let device = try SyntheticAppAttest.DeviceKey()
            let challenge = try await Self.challenge(from: fleet[0])
            let assertion = try SyntheticAppAttest.assertion(
                by: device, clientData: Array(challenge.utf8), appID: Self.app, counter: 1)
            let refused = try await fleet[0].post(
                "/attest/session",
                body: Self.json(["key_id": device.keyID, "assertion": assertion], challenge: challenge))
            #expect(refused.status == 401)
            #expect(refused.text.contains(#""status_code":1001"#), "\(refused.text)")
        }
    }

    @Test func monitorModeServesWithoutAProofAndCountsIt() async throws {
        try await withAttestFleet(mode: .monitor) { fleet, _ in
            #expect(try await fleet[0].get("/3/movie/550").status == 200)
            let samples = try await fleet[0].metrics()
            #expect(
                try samples.value("amodb_proxy_requests_by_proof_total", ["proof": "none", "outcome": "would_refuse"])
                    == 1)
            let status = try await fleet[0].get("/status.json").text
            #expect(status.contains(#""would_refuse":1"#), "\(status)")
        }
    }

    @Test func badInputIsRefusedClearlyAndAFloodIsChargedToTheAddress() async throws {
        try await withAttestFleet(mode: .enforce, clientRateLimit: 5) { fleet, apple in
            let malformed = try await fleet[0].post("/attest/keys", body: Array("not json".utf8))
            #expect(malformed.status == 400)
            #expect(malformed.text.contains("The body must be JSON"))
            let device = try SyntheticAppAttest.DeviceKey()
            // An attestation for another app.
            let challenge = try await Self.challenge(from: fleet[0])
            let other = try apple.attestation(
                for: device, clientData: Array(challenge.utf8),
                appID: AppID(teamID: "ZZZZZ99999", bundleID: "com.example.other"))
            let refused = try await fleet[0].post(
                "/attest/keys", body: Self.json(["key_id": device.keyID, "attestation": other], challenge: challenge))
            #expect(refused.status == 401)
            #expect(refused.text.contains("The attestation is refused"), "\(refused.text)")
            // The address's bucket is spent: the next are refused before any check.
            var statuses: [Int] = []
            for _ in 0..<40 {
                statuses.append(try await fleet[0].post("/attest/keys", body: Array("{}".utf8)).status)
            }
            #expect(statuses.contains(429), "\(statuses)")
            #expect(try await fleet[0].get("/healthz").status == 200, "and the proxy keeps serving")
        }
    }

    // MARK: Helpers

    static func challenge(from replica: ProxyHarness) async throws -> String {
        let response = try await replica.get("/attest/challenge")
        try #require(response.status == 200, "\(response.text)")
        return try #require(field("challenge", in: response.text))
    }

    static func json(_ bytes: [String: [UInt8]], challenge: String) -> [UInt8] {
        var object: [String: String] = ["challenge": challenge]
        for (name, value) in bytes { object[name] = Data(value).base64EncodedString() }
        return Array((try? JSONSerialization.data(withJSONObject: object)) ?? Data())
    }

    static func field(_ name: String, in text: String) -> String? {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])?[name] as? String
    }
}

/// Two replicas over a fresh Redis with App Attest on for `AppAttestFleetTests.app`, trusting
/// a synthetic root, `AMODB_PROOF=attested` in `mode`.
private func withAttestFleet(
    mode: ProofMode, clientRateLimit: Int? = nil, _ body: (Fleet, SyntheticAppAttest) async throws -> Void
) async throws {
    let apple = try SyntheticAppAttest()
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("attest-root-\(UUID().uuidString).pem")
    let base64 = Data(apple.root.der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
    try Data(("-----BEGIN CERTIFICATE-----\n" + base64 + "\n-----END CERTIFICATE-----\n").utf8).write(to: root)
    defer { try? FileManager.default.removeItem(at: root) }
    try await withFleet(
        2,
        adjust: { configuration in
            configuration.attestApps = ["ABCDE12345.com.example.movies"]
            configuration.attestRootFile = root.path
            configuration.proof = .attested
            configuration.proofMode = mode
            if let clientRateLimit {
                configuration.clientRateLimit = clientRateLimit
                configuration.clientBurst = clientRateLimit
                configuration.rateLimitExempt = []
            }
        }
    ) { (fleet: Fleet, _: RedisServer) async throws in
        try await body(fleet, apple)
    }
}
