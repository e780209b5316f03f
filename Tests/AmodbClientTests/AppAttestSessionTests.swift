import AmodbTestSupport
import Foundation
import Testing

@testable import AmodbClient

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An App Attest session against a stand-in for the proxy's endpoints, through a real
/// URLSession: what it sends, when it attests and asks again, and how it fails.
@Suite(.timeLimit(.minutes(1)))
struct AppAttestSessionTests {
    /// A stand-in, a device, a key store and a clock, and a session over them.
    struct Rig {
        let standIn: AttestStandIn
        let provider = FakeAttestationProvider()
        let keyStore: InMemoryAttestationKeyStore
        let clock = TestClock()
        let urlSession: URLSession = {
            let configuration = URLSessionConfiguration.ephemeral
            configuration.urlCache = nil
            return URLSession(configuration: configuration)
        }()
        let session: AppAttestSession

        init(standIn: AttestStandIn, keyID: String?, baseURL: URL? = nil) {
            self.standIn = standIn
            keyStore = InMemoryAttestationKeyStore(keyID: keyID)
            session = AppAttestSession(
                baseURL: baseURL ?? standIn.baseURL, provider: provider, keyStore: keyStore, session: urlSession,
                clock: clock)
        }

        /// A client of the stand-in's API whose token comes from the session.
        var client: AmodbClient {
            AmodbClient(baseURL: standIn.baseURL, tokenProvider: session.tokenProvider, session: urlSession)
        }
    }

    /// Runs `body` with a rig on a new stand-in served under `prefix`, whose store holds `keyID`.
    func withRig(prefix: String = "", keyID: String? = nil, _ body: (Rig) async throws -> Void) async throws {
        try await withServer(try AttestStandIn(prefix: prefix)) { standIn in
            try await body(Rig(standIn: standIn, keyID: keyID))
        }
    }

    // MARK: The exchange

    @Test func theFirstTokenAttestsAKeyOnceAndAsksOneSession() async throws {
        try await withRig { rig in
            let token = try await rig.session.token()
            #expect(token == "session-token-1")
            #expect(rig.standIn.requests.map(\.endpoint) == [.challenge, .keys, .challenge, .session])
            #expect(rig.provider.calls.map(\.method) == ["generateKey", "attestKey", "generateAssertion"])
            let keyID = try #require(rig.provider.calls.first?.keyID)
            #expect(rig.standIn.attestedKeys == [keyID])
            #expect(rig.keyStore.load() == keyID)
            // A challenge is one-time: the attestation and the assertion each sign their own.
            let challenges = rig.standIn.challenges
            #expect(challenges.count == 2 && challenges[0] != challenges[1])
        }
    }

    @Test func theClientDataHashIsSHA256OfTheChallengesUTF8Bytes() async throws {
        try await withRig { rig in
            _ = try await rig.session.token()
            let challenges = rig.standIn.challenges
            #expect(challenges.allSatisfy { $0.utf8.count > $0.unicodeScalars.count })
            #expect(
                rig.provider.calls.compactMap(\.clientDataHash) == challenges.map(AttestStandIn.clientDataHash))
            #expect(challenges.map(AppAttestSession.clientDataHash) == challenges.map(AttestStandIn.clientDataHash))
        }
    }

    @Test func theBodiesAreJSONWithStandardBase64AndTheChallengeAsSent() async throws {
        try await withRig { rig in
            _ = try await rig.session.token()
            let keyID = try #require(rig.keyStore.load())
            #expect(keyID.contains("/") && keyID.hasSuffix("="))
            let posts = rig.standIn.requests.filter { $0.method == "POST" }
            #expect(posts.map(\.endpoint) == [.keys, .session])
            for (post, field) in zip(posts, ["attestation", "assertion"]) {
                #expect(post.headers["content-type"] == "application/json")
                let object = try #require(try JSONSerialization.jsonObject(with: Data(post.body)) as? [String: String])
                #expect(Set(object.keys) == ["key_id", field, "challenge"])
                #expect(object["key_id"] == keyID)
                #expect(object[field].flatMap { Data(base64Encoded: $0) } != nil)
                // Sent as the proxy gave it, `/` unescaped in the JSON.
                #expect(String(decoding: post.body, as: UTF8.self).contains(keyID))
            }
        }
    }

    @Test func aSecondCallReusesTheToken() async throws {
        try await withRig { rig in
            let first = try await rig.session.token()
            rig.clock.advance(by: .seconds(3000))
            let second = try await rig.session.token()
            #expect(first == second)
            #expect(rig.standIn.requests.count == 4)
        }
    }

    @Test func aKeptKeyIsNotAttestedAgainByANewSession() async throws {
        try await withRig { rig in
            _ = try await rig.session.token()
            let keyID = try #require(rig.keyStore.load())
            let later = AppAttestSession(
                baseURL: rig.standIn.baseURL, provider: rig.provider, keyStore: rig.keyStore,
                session: rig.urlSession)
            #expect(try await later.token() == "session-token-2")
            #expect(rig.standIn.attestedKeys == [keyID])
            #expect(rig.provider.calls("generateAssertion").map(\.keyID) == [keyID, keyID])
        }
    }

    // MARK: Renewal

    @Test(
        "A token is renewed five minutes before its end, or a tenth of its life before",
        arguments: [(3600, 3300), (120, 108), (7200, 6900)])
    func aTokenNearItsEndIsRenewedWithANewAssertion(life: Int, renewAt: Int) async throws {
        try await withRig { rig in
            rig.standIn.setTokenLife(life)
            let first = try await rig.session.token()
            rig.clock.advance(by: .seconds(renewAt) - .milliseconds(1))
            #expect(try await rig.session.token() == first)
            rig.clock.advance(by: .milliseconds(1))
            let second = try await rig.session.token()
            #expect(second != first)
            #expect(rig.standIn.attestedKeys.count == 1)
            #expect(
                rig.provider.calls.map(\.method) == [
                    "generateKey", "attestKey", "generateAssertion", "generateAssertion",
                ])
        }
    }

    @Test func whenRenewalFailsTheTokenIsHandedOutUntilItEnds() async throws {
        try await withRig { rig in
            let first = try await rig.session.token()
            rig.standIn.script(.session, .error(503, "The proxy is starting."), .error(503, "The proxy is starting."))
            rig.clock.advance(by: .seconds(3400))
            #expect(try await rig.session.token() == first)
            rig.clock.advance(by: .seconds(200))
            let error = await #expect(throws: AmodbClientError.self) { try await rig.session.token() }
            #expect(error?.kind == .serverError)
            #expect(try await rig.session.token() == "session-token-2")
        }
    }

    // MARK: Forced refresh

    @Test func aForcedRefreshGetsANewSession() async throws {
        try await withRig { rig in
            let first = try await rig.session.token()
            rig.clock.advance(by: .seconds(60))
            let second = try await rig.session.token(forceRefresh: true)
            #expect(second != first)
            #expect(rig.standIn.tokens == [first, second])
            #expect(rig.standIn.attestedKeys.count == 1)
        }
    }

    @Test func aForcedRefreshWithinSecondsOfANewSessionSharesIt() async throws {
        try await withRig { rig in
            let first = try await rig.session.token()
            rig.clock.advance(by: .seconds(9))
            #expect(try await rig.session.token(forceRefresh: true) == first)
            #expect(rig.standIn.tokens.count == 1)
        }
    }

    @Test func aClientGetsANewSessionWhenTheProxyRefusesTheToken() async throws {
        try await withRig { rig in
            let client = rig.client
            _ = try await client.configuration()
            rig.clock.advance(by: .seconds(60))
            rig.standIn.refuseTokens()
            _ = try await client.configuration()
            let api = rig.standIn.requests.filter { $0.endpoint == .api }.map { $0.headers["authorization"] }
            #expect(api == ["Bearer session-token-1", "Bearer session-token-1", "Bearer session-token-2"])
            #expect(rig.standIn.attestedKeys.count == 1)
        }
    }

    // MARK: Keys

    @Test func anUnknownKeyIsReplacedByANewAttestedKey() async throws {
        try await withRig(keyID: "a2V5IHRoZSBwcm94eSBsb3N0") { rig in
            #expect(try await rig.session.token() == "session-token-1")
            #expect(
                rig.standIn.requests.map(\.endpoint) == [.challenge, .session, .challenge, .keys, .challenge, .session])
            let newKey = try #require(rig.provider.calls("generateKey").first?.keyID)
            #expect(rig.keyStore.load() == newKey)
            #expect(rig.standIn.attestedKeys == [newKey])
        }
    }

    @Test func aKeyTheProxyForgotIsReplacedAtTheNextSession() async throws {
        try await withRig { rig in
            _ = try await rig.session.token()
            rig.standIn.forgetKeys()
            rig.clock.advance(by: .seconds(3300))
            #expect(try await rig.session.token() == "session-token-2")
            #expect(rig.standIn.attestedKeys.count == 2)
            #expect(rig.keyStore.load() == rig.standIn.attestedKeys.last)
        }
    }

    @Test func aKeyTheDeviceLostIsReplaced() async throws {
        try await withRig(keyID: "bG9zdCBrZXk=") { rig in
            rig.provider.lose("bG9zdCBrZXk=")
            let token = try await rig.session.token()
            #expect(token == "session-token-1")
            #expect(
                rig.provider.calls.map(\.method) == [
                    "generateAssertion", "generateKey", "attestKey", "generateAssertion",
                ])
            #expect(rig.keyStore.load() == rig.standIn.attestedKeys.first)
        }
    }

    @Test func anUnknownKeyJustAttestedIsNotRetriedInALoop() async throws {
        try await withRig(keyID: "c3RhbGU=") { rig in
            let unknown = AttestStandIn.Reply.error(401, code: 1001, "The key is not known; attest a new key.")
            rig.standIn.script(.session, unknown, unknown, unknown)
            let error = await #expect(throws: AmodbClientError.self) { try await rig.session.token() }
            #expect(error?.kind == .attestationFailed && error?.status == 401)
            #expect(
                error?.message
                    == "The proxy refused the app's App Attest assertion (401): The key is not known; attest a new key."
            )
            #expect(rig.standIn.count(.session) == 2)
            #expect(rig.standIn.attestedKeys.count == 1)
        }
    }

    @Test func aKeyIsKeptOnlyOnceTheProxyAcceptedIt() async throws {
        try await withRig { rig in
            rig.standIn.script(.keys, .error(401, "The attestation's App ID is not one this proxy accepts."))
            await #expect(throws: AmodbClientError.self) { try await rig.session.token() }
            #expect(rig.keyStore.load() == nil)
        }
    }

    // MARK: Concurrency

    @Test func tenCallersAtOnceShareOneExchange() async throws {
        try await withRig { rig in
            rig.standIn.hold()
            let session = rig.session
            async let tokens = withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<10 { group.addTask { try await session.token() } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(await eventually(within: 30) { rig.standIn.heldCount == 1 })
            // Time for the other nine to ask: had any started an exchange of its own, its
            // challenge request would be held here too.
            try await Task.sleep(for: .milliseconds(200))
            #expect(rig.standIn.heldCount == 1)
            rig.standIn.release()
            #expect(try await tokens == Array(repeating: "session-token-1", count: 10))
            #expect(rig.standIn.count(.challenge) == 2)
            #expect(rig.standIn.count(.keys) == 1)
            #expect(rig.standIn.count(.session) == 1)
        }
    }

    // MARK: Failures

    @Test(
        "Each refusal says which step the proxy refused, and why",
        arguments: [
            (
                AttestStandIn.Endpoint.challenge, AttestStandIn.Reply.error(404, "App Attest is not enabled."),
                AmodbClientError.Kind.attestationFailed,
                "The proxy does not offer App Attest (404): App Attest is not enabled."
            ),
            (
                .keys, .error(401, "The attestation's App ID is not one this proxy accepts."), .attestationFailed,
                "The proxy refused the app's App Attest attestation (401): The attestation's App ID is not one this proxy accepts."
            ),
            (
                .keys, .error(400, "The body is not valid JSON."), .attestationFailed,
                "The proxy refused the app's App Attest attestation (400): The body is not valid JSON."
            ),
            (
                .session, .error(401, "The assertion's counter did not increase."), .attestationFailed,
                "The proxy refused the app's App Attest assertion (401): The assertion's counter did not increase."
            ),
            (
                .session, .error(429, "Too many sessions.", headers: ["Retry-After": "30"]), .rateLimited,
                "Too many requests to the proxy for App Attest (429): Too many sessions. Try again in 30 s."
            ),
            (
                .challenge, .error(503, "The proxy is starting.", headers: ["Retry-After": "5"]), .serverError,
                "The proxy failed to answer the request for an App Attest challenge (503): The proxy is starting. Try again later."
            ),
            (
                .challenge, AttestStandIn.Reply(status: 200, body: "{}"), .invalidResponse,
                "The proxy's answer to the request for an App Attest challenge could not be read (200): challenge is missing."
            ),
            (
                .session, AttestStandIn.Reply(status: 200, body: #"{"token":"t","expires_in":"soon"}"#),
                .invalidResponse,
                "The proxy's answer to the app's App Attest assertion could not be read (200): expires_in is not a Int."
            ),
            (
                .session, AttestStandIn.Reply(status: 200, body: #"{"token":"t","expires_in":0}"#), .invalidResponse,
                "The proxy's answer to the app's App Attest assertion could not be read (200): expires_in is not positive."
            ),
        ])
    func refusalsSayWhatFailed(
        endpoint: AttestStandIn.Endpoint, reply: AttestStandIn.Reply, kind: AmodbClientError.Kind, message: String
    ) async throws {
        try await withRig { rig in
            rig.standIn.script(endpoint, reply)
            let error = await #expect(throws: AmodbClientError.self) { try await rig.session.token() }
            #expect(error?.kind == kind)
            #expect(error?.status == reply.status)
            #expect(error?.message == message)
        }
    }

    @Test func aRefusalIsNotAskedAgainForAMinute() async throws {
        try await withRig { rig in
            rig.standIn.script(.keys, .error(401, "The attestation's App ID is not one this proxy accepts."))
            let first = await #expect(throws: AmodbClientError.self) { try await rig.session.token() }
            let requests = rig.standIn.requests.count
            rig.clock.advance(by: .seconds(59))
            let second = await #expect(throws: AmodbClientError.self) {
                try await rig.session.token(forceRefresh: true)
            }
            #expect(second == first)
            #expect(rig.standIn.requests.count == requests)
            rig.clock.advance(by: .seconds(1))
            let token = try await rig.session.token()
            #expect(token == "session-token-1")
        }
    }

    @Test func a429IsNotAskedAgainBeforeItsRetryAfter() async throws {
        try await withRig { rig in
            rig.standIn.script(.challenge, .error(429, "Too many challenges.", headers: ["Retry-After": "120"]))
            let first = await #expect(throws: AmodbClientError.self) { try await rig.session.token() }
            #expect(first?.retryAfter == .seconds(120) && first?.isTransient == true)
            rig.clock.advance(by: .seconds(119))
            await #expect(throws: AmodbClientError.self) { try await rig.session.token() }
            #expect(rig.standIn.requests.count == 1)
            rig.clock.advance(by: .seconds(1))
            let token = try await rig.session.token()
            #expect(token == "session-token-1")
        }
    }

    @Test func aDeviceWithoutAppAttestSaysSoAndSendsNothing() async throws {
        try await withRig { rig in
            rig.provider.setUnsupported()
            let error = await #expect(throws: AmodbClientError.self) { try await rig.client.configuration() }
            #expect(error?.kind == .attestationFailed && error?.status == nil)
            #expect(
                error?.message == "App Attest could not vouch for this app: App Attest is not supported on this device."
            )
            #expect(rig.standIn.requests.isEmpty)
        }
    }

    @Test func aProxyThatCannotBeReachedIsAnOfflineError() async throws {
        let closed = try LocalSocket(listening: false)
        let session = AppAttestSession(
            baseURL: URL(string: "http://127.0.0.1:\(closed.port)/3")!, provider: FakeAttestationProvider(),
            keyStore: InMemoryAttestationKeyStore(keyID: "a2V5"), clock: TestClock())
        let error = await #expect(throws: AmodbClientError.self) { try await session.token() }
        #expect(error?.kind == .offline)
        #expect(error?.message == "Cannot connect to the server 127.0.0.1.")
    }

    @Test func noErrorOrDescriptionHoldsTheToken() async throws {
        try await withRig { rig in
            let client = rig.client
            _ = try await client.configuration()
            rig.standIn.refuseTokens()
            // Within seconds of the session: the same token again, refused again.
            let error = await #expect(throws: AmodbClientError.self) { try await client.configuration() }
            #expect(error?.kind == .unauthorized)
            for text in [error?.message ?? "", String(describing: error), client.description] {
                #expect(!text.contains("session-token"))
            }
        }
    }

    // MARK: URLs

    @Test func aBaseURLWithAPathPrefixServesAttestBesideTheAPI() async throws {
        try await withRig(prefix: "/movies/api") { rig in
            _ = try await rig.client.configuration()
            #expect(
                rig.standIn.requests.map(\.path) == [
                    "/movies/api/attest/challenge", "/movies/api/attest/keys", "/movies/api/attest/challenge",
                    "/movies/api/attest/session", "/movies/api/3/configuration",
                ])
        }
    }
}
