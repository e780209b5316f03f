import AmodbAttest
import AmodbCrypto
import AmodbHTTP
import Foundation

/// Apple App Attest, verified here, under `/attest/`: the exchange that turns a genuine copy
/// of the app on a real device into a session token (`SessionTokens`) it then sends as
/// `Authorization: Bearer`.
///
/// - `GET /attest/challenge`: a one-time challenge (32 random bytes, base64url), good for
///   `challengeLifetime` and taken once, fleet-wide with Redis. The app's client data is
///   the challenge text's UTF-8 bytes.
/// - `POST /attest/keys` `{"key_id","attestation","challenge"}` (base64; the attestation is
///   what `DCAppAttestService.attestKey` returned): checked by every step of Apple's
///   validation (`AppAttestVerifier`), then the key is kept with its counter at 0.
/// - `POST /attest/session` `{"key_id","assertion","challenge"}`: an assertion over a fresh
///   challenge by a kept key, with a counter above the kept one, set in one step (a replayed
///   assertion is refused on every replica): a session token for the key.
///
/// Each request first takes one from its address's bucket (`AMODB_CLIENT_RATE_LIMIT`, its
/// own bucket, `attest:<network>`: the address, an IPv6 one by its prefix, `ClientNetwork`),
/// before any parse or signature check: a flood of
/// attestations costs a bounded amount of work. Verification runs off the event loop.
struct AttestService: Sendable {
    let verifier: AppAttestVerifier
    let sessions: SessionTokens
    let store: any AttestStore
    let rateLimiter: CallerRateLimiter?
    let clock: any ProxyClock
    let metrics: ProxyMetrics

    /// How long a challenge is good, in seconds: an attestation takes the device a second or two.
    static let challengeLifetime: Double = 120
    /// The body's `status_code` for a key this proxy does not know: the app attests a new one.
    static let unknownKeyCode = 1001

    /// The paths served.
    enum Endpoint: Sendable {
        case challenge, keys, session

        init?(path: String) {
            switch path {
            case "/attest/challenge": self = .challenge
            case "/attest/keys": self = .keys
            case "/attest/session": self = .session
            default: return nil
            }
        }
    }

    /// The answer to `request` at `endpoint` from `address` (the caller's network key,
    /// `Caller.networkKey`; limited unless exempt).
    func respond(
        to endpoint: Endpoint, method: String, body: [UInt8], chunked: Bool, address: String, limited: Bool
    ) async -> HTTPResponse {
        let now = clock.now()
        if limited, let rateLimiter, let wait = rateLimiter.take("attest:" + address, now: now) {
            return APIRefusal.tooManyRequests(
                { "Too many attestation requests from this address; try again in \($0) s." }, wait: wait
            )
            .response
        }
        let response: HTTPResponse
        switch (endpoint, method) {
        case (.challenge, "GET"), (.challenge, "HEAD"):
            response = await challenge(now: now)
        case (.keys, "POST"), (.session, "POST"):
            if chunked {
                return refusal(
                    411, "A body with Content-Length is required (a chunked one is not read).", result: "malformed")
            }
            response = endpoint == .keys ? await keys(body, now: now) : await session(body, now: now)
        default:
            var headers = HTTPHeaders()
            headers.set("Allow", endpoint == .challenge ? "GET, HEAD" : "POST")
            response =
                APIRefusal(
                    .methodNotAllowed, "\(endpoint == .challenge ? "GET" : "POST") is the method of this path.",
                    headers: headers
                ).response
        }
        return response
    }

    private func challenge(now: Double) async -> HTTPResponse {
        var random = SystemRandomNumberGenerator()
        let challenge = Base64URL.encode((0..<32).map { _ in UInt8.random(in: 0...255, using: &random) })
        guard await store.issue(challenge: challenge, lifetime: Self.challengeLifetime, now: now) else {
            return Self.unavailable()
        }
        metrics.recordAttest("challenge")
        return Self.json(
            200,
            #"{"challenge":"# + JSONText.quoted(challenge) + #","expires_in":"# + String(Int(Self.challengeLifetime))
                + "}")
    }

    /// What `/attest/keys` and `/attest/session` take.
    private struct Submission: Decodable {
        let keyID: String
        let attestation: String?
        let assertion: String?
        let challenge: String

        enum CodingKeys: String, CodingKey {
            case keyID = "key_id"
            case attestation, assertion, challenge
        }
    }

    /// A submission read, or the answer that refuses it.
    private enum Read {
        case read(Submission, keyID: [UInt8], proof: [UInt8])
        case refused(HTTPResponse)
    }

    private func read(_ body: [UInt8], proof: String) -> Read {
        guard let submission = try? JSONDecoder().decode(Submission.self, from: Data(body)) else {
            return .refused(
                refusal(
                    400, "The body must be JSON: {\"key_id\":…,\"\(proof)\":…,\"challenge\":…}, each a string.",
                    result: "malformed"))
        }
        let encoded = proof == "attestation" ? submission.attestation : submission.assertion
        guard let keyID = Data(base64Encoded: submission.keyID).map(Array.init), keyID.count == 32 else {
            return .refused(refusal(400, "key_id must be the key's id in base64 (32 bytes).", result: "malformed"))
        }
        guard let encoded, let bytes = Data(base64Encoded: encoded).map(Array.init), !bytes.isEmpty else {
            return .refused(refusal(400, "\(proof) must be base64.", result: "malformed"))
        }
        return .read(submission, keyID: keyID, proof: bytes)
    }

    private func keys(_ body: [UInt8], now: Double) async -> HTTPResponse {
        let (submission, keyID, attestation): (Submission, [UInt8], [UInt8])
        switch read(body, proof: "attestation") {
        case .refused(let refusal): return refusal
        case .read(let read, let key, let proof): (submission, keyID, attestation) = (read, key, proof)
        }
        if let refused = await take(submission.challenge, now: now) { return refused }
        let attested: AttestedKey
        do {
            attested = try verifier.verifyAttestation(
                attestation, keyID: keyID, clientData: Array(submission.challenge.utf8),
                at: Date(timeIntervalSince1970: now))
        } catch {
            return refusal(401, "The attestation is refused: \(error.reason).", result: Self.label(error))
        }
        let stored = StoredAttestKey(
            keyID: keyID, publicKey: attested.publicKey, counter: 0,
            app: attested.appID.teamID + "." + attested.appID.bundleID,
            development: attested.environment == .development)
        guard await store.save(stored) else { return Self.unavailable() }
        metrics.recordAttest("key")
        return Self.json(
            201,
            #"{"key_id":"# + JSONText.quoted(submission.keyID) + #","environment":"#
                + (stored.development ? #""development"}"# : #""production"}"#))
    }

    private func session(_ body: [UInt8], now: Double) async -> HTTPResponse {
        let (submission, keyID, assertion): (Submission, [UInt8], [UInt8])
        switch read(body, proof: "assertion") {
        case .refused(let refusal): return refusal
        case .read(let read, let key, let proof): (submission, keyID, assertion) = (read, key, proof)
        }
        let kept: StoredAttestKey
        switch await store.key(keyID) {
        case .unavailable: return Self.unavailable()
        case .answer(nil):
            return refusal(
                401, "The key is unknown to this proxy: generate and attest a new key (POST /attest/keys).",
                result: "unknown_key", code: Self.unknownKeyCode)
        case .answer(let key?): kept = key
        }
        if let refused = await take(submission.challenge, now: now) { return refused }
        let app = kept.app.split(separator: ".", maxSplits: 1).map(String.init)
        let counter: UInt32
        do {
            counter = try verifier.verifyAssertion(
                assertion, clientData: Array(submission.challenge.utf8), publicKey: kept.publicKey,
                previousCounter: kept.counter,
                appID: app.count == 2 ? AppID(teamID: app[0], bundleID: app[1]) : nil)
        } catch {
            return refusal(401, "The assertion is refused: \(error.reason).", result: Self.label(error))
        }
        switch await store.advance(keyID, to: counter) {
        case .unavailable: return Self.unavailable()
        case .answer(false):
            return refusal(
                401, "The assertion is refused: its counter is not above the last one seen (a replay).",
                result: "counter")
        case .answer(true): break
        }
        let (token, expires) = sessions.issue(for: keyID, now: now)
        metrics.recordAttest("session")
        return Self.json(
            200, #"{"token":"# + JSONText.quoted(token) + #","expires_in":"# + String(Int(expires - now)) + "}")
    }

    /// Takes the one-time `challenge`: `nil` when it was handed out and is still good, else
    /// the answer that refuses it.
    private func take(_ challenge: String, now: Double) async -> HTTPResponse? {
        switch await store.consume(challenge: challenge, now: now) {
        case .unavailable: Self.unavailable()
        case .answer(false):
            refusal(
                401, "The challenge is unknown, used or expired: ask for a new one (GET /attest/challenge).",
                result: "challenge")
        case .answer(true): nil
        }
    }

    /// A refusal, counted by what failed.
    private func refusal(_ status: Int, _ message: String, result: String, code: Int? = nil) -> HTTPResponse {
        metrics.recordAttest("refused_" + result)
        return APIRefusal(.attestation, status: status, message, code: code).response
    }

    private static func unavailable() -> HTTPResponse {
        return APIRefusal(
            .attestation, status: 503,
            "Attestation is unavailable for a moment: the fleet's store (Redis) is unreachable; try again in 2 s.",
            retryAfter: 2
        ).response
    }

    private static func json(_ status: Int, _ body: String) -> HTTPResponse {
        var response = HTTPResponse.json(status, Array(body.utf8))
        response.headers.set("Cache-Control", "no-store")
        return response
    }

    /// A short label of what failed, for the counts.
    static func label(_ error: AttestError) -> String {
        switch error {
        case .tooLarge: "too_large"
        case .malformedCBOR, .malformed, .malformedCertificate, .wrongFormat: "malformed"
        case .untrustedChain: "untrusted_chain"
        case .certificateExpired, .certificateNotYetValid: "certificate_time"
        case .nonceMismatch: "nonce"
        case .keyIDMismatch, .credentialIDMismatch, .invalidPublicKey: "key_id"
        case .unknownApp: "unknown_app"
        case .counterNotZero, .counterNotIncreasing: "counter"
        case .wrongAAGUID, .developmentNotAllowed: "environment"
        case .badSignature: "bad_signature"
        }
    }
}
