import AmodbModels
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension AppAttestSession {
    /// What `…/attest/keys` is sent: a new key's attestation over a challenge.
    struct KeyAttestation: Encodable {
        let keyID: String
        let attestation: String
        let challenge: String

        enum CodingKeys: String, CodingKey {
            case keyID = "key_id"
            case attestation, challenge
        }
    }

    /// What `…/attest/session` is sent: an assertion by the key over a fresh challenge.
    struct SessionRequest: Encodable {
        let keyID: String
        let assertion: String
        let challenge: String

        enum CodingKeys: String, CodingKey {
            case keyID = "key_id"
            case assertion, challenge
        }
    }

    /// What `…/attest/challenge` answers.
    struct ChallengeAnswer: Decodable {
        let challenge: String
    }

    /// What `…/attest/session` answers.
    struct SessionAnswer: Decodable {
        let token: String
        /// The token's life, in seconds.
        let expiresIn: Int

        enum CodingKeys: String, CodingKey {
            case token
            case expiresIn = "expires_in"
        }
    }

    /// How asking for a session ended, when the proxy answered.
    enum SessionOutcome {
        /// A token.
        case issued(Issued)
        /// The key is not one the proxy knows (`status_code` 1001), or the device no longer
        /// has it: a new key may do; the error is what to say if none is made.
        case keyUnknown(AmodbClientError)
    }

    /// `status_code` of a 401 from `…/attest/session` for a key the proxy does not know.
    static let unknownKeyCode = 1001

    /// The client data hash App Attest signs: SHA-256 of the challenge text's UTF-8 bytes,
    /// as the proxy computes it.
    static func clientDataHash(_ challenge: String) -> Data {
        Data(SHA256Digest.hash(challenge.utf8))
    }

    /// One exchange: a key attested first when none is kept, then a session. A key the
    /// proxy or the device no longer knows is replaced once; a key attested in this very
    /// exchange is never replaced (a proxy that forgets keys at once would loop).
    func newSession() async throws(AmodbClientError) -> Issued {
        let endpoints = try endpoints.get()
        var keyID: String
        var attestedNow = false
        if let kept = keyStore.load(), !kept.isEmpty {
            keyID = kept
        } else {
            keyID = try await attestNewKey(endpoints)
            attestedNow = true
        }
        while true {
            switch try await askSession(keyID: keyID, endpoints) {
            case .issued(let issued):
                return issued
            case .keyUnknown(let error):
                guard !attestedNow else { throw error }
                keyStore.save(nil)
                keyID = try await attestNewKey(endpoints)
                attestedNow = true
            }
        }
    }

    /// Makes a key, has it attested over a fresh challenge and sends the attestation; keeps
    /// the key's id only once the proxy has accepted it, so a key the proxy never saw is
    /// never kept (the next exchange makes another).
    private func attestNewKey(_ endpoints: AttestEndpoints) async throws(AmodbClientError) -> String {
        let keyID: String
        do {
            keyID = try await provider.generateKey()
        } catch {
            throw Self.deviceError(error, failedTo: "make an App Attest key")
        }
        let challenge = try await challenge(endpoints)
        let attestation: Data
        do {
            attestation = try await provider.attestKey(keyID, clientDataHash: Self.clientDataHash(challenge))
        } catch {
            throw Self.deviceError(error, failedTo: "attest its App Attest key")
        }
        let body = KeyAttestation(keyID: keyID, attestation: attestation.base64EncodedString(), challenge: challenge)
        let response = try await send(try Self.post(body, to: endpoints.keys, timeout: timeout))
        guard response.isSuccess else { throw Self.refusal(response, .attestation) }
        keyStore.save(keyID)
        return keyID
    }

    /// Signs a fresh challenge with the key and asks for a session token.
    private func askSession(keyID: String, _ endpoints: AttestEndpoints) async throws(AmodbClientError)
        -> SessionOutcome
    {
        let challenge = try await challenge(endpoints)
        let assertion: Data
        do {
            assertion = try await provider.generateAssertion(keyID, clientDataHash: Self.clientDataHash(challenge))
        } catch let error as AppAttestationInvalidKeyError {
            return .keyUnknown(AmodbClientError(.attestationUnavailable(error.description)))
        } catch {
            throw Self.deviceError(error, failedTo: "sign an App Attest assertion")
        }
        // The token's life is counted from before it was asked for, so it ends here no
        // later than at the proxy.
        let askedAt = now()
        let body = SessionRequest(keyID: keyID, assertion: assertion.base64EncodedString(), challenge: challenge)
        let response = try await send(try Self.post(body, to: endpoints.session, timeout: timeout))
        if response.status == 401, response.errorBody?.statusCode == Self.unknownKeyCode {
            return .keyUnknown(Self.refusal(response, .session))
        }
        guard response.isSuccess else { throw Self.refusal(response, .session) }
        let answer = try Self.decode(SessionAnswer.self, from: response, .session)
        guard !answer.token.isEmpty else {
            throw AmodbClientError(.attestationUnreadable(.session, status: response.status, detail: "token is empty"))
        }
        guard answer.expiresIn > 0 else {
            throw AmodbClientError(
                .attestationUnreadable(.session, status: response.status, detail: "expires_in is not positive"))
        }
        let life = Duration.seconds(answer.expiresIn)
        let expiresAt = askedAt + life
        return .issued(
            Issued(
                token: BearerToken(value: answer.token), receivedAt: now(),
                renewAt: expiresAt - min(Self.renewalMargin, life / 10), expiresAt: expiresAt))
    }

    /// A one-time challenge from the proxy, to be signed at once.
    private func challenge(_ endpoints: AttestEndpoints) async throws(AmodbClientError) -> String {
        var request = URLRequest(url: endpoints.challenge)
        request.httpMethod = "GET"
        request.timeoutInterval = AmodbClient.effectiveTimeout(timeout)
        // The proxy sends `Cache-Control: no-store`; a challenge is good once, so never look in a cache.
        request.cachePolicy = .reloadIgnoringLocalCacheData
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        let response = try await send(request)
        guard response.isSuccess else { throw Self.refusal(response, .challenge) }
        let answer = try Self.decode(ChallengeAnswer.self, from: response, .challenge)
        guard !answer.challenge.isEmpty else {
            throw AmodbClientError(
                .attestationUnreadable(.challenge, status: response.status, detail: "challenge is empty"))
        }
        return answer.challenge
    }

    /// A JSON `POST` of `body` to `url`.
    private static func post(
        _ body: some Encodable, to url: URL, timeout: TimeInterval
    ) throws(AmodbClientError) -> URLRequest {
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.timeoutInterval = AmodbClient.effectiveTimeout(timeout)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        let encoder = JSONEncoder()
        // Base64 has `/`; JSON allows it unescaped, and the body reads as sent.
        encoder.outputFormatting = [.withoutEscapingSlashes]
        do {
            request.httpBody = try encoder.encode(body)
        } catch {
            throw AmodbClientError(.invalidRequest("The App Attest request could not be encoded."))
        }
        return request
    }

    /// Sends one request of the exchange and returns whatever HTTP response comes back;
    /// throws only when there is none.
    private func send(_ request: URLRequest) async throws(AmodbClientError) -> AmodbResponse {
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await urlSession.data(for: request)
        } catch {
            throw AmodbClient.transportError(error, host: request.url?.host, timeout: timeout)
        }
        guard let http = response as? HTTPURLResponse else {
            throw AmodbClientError(.invalidResponse(status: nil, detail: "the answer is not an HTTP response"))
        }
        return AmodbResponse(status: http.statusCode, headers: AmodbClient.headers(of: http), body: data)
    }

    /// Decodes a 2xx answer of `step`, or says where it is not the expected JSON.
    private static func decode<T: Decodable>(
        _ type: T.Type, from response: AmodbResponse, _ step: AmodbClientError.AttestStep
    ) throws(AmodbClientError) -> T {
        do {
            return try JSONDecoder().decode(type, from: response.body)
        } catch let error as DecodingError {
            throw AmodbClientError(
                .attestationUnreadable(step, status: response.status, detail: AmodbResponse.summary(of: error)))
        } catch {
            throw AmodbClientError(
                .attestationUnreadable(step, status: response.status, detail: "the body is not valid JSON"))
        }
    }

    /// The error a non-2xx answer of `step` stands for, with the proxy's message (a
    /// sentence, cut at 300 characters) and, for 429 and 503, its `Retry-After`.
    private static func refusal(_ response: AmodbResponse, _ step: AmodbClientError.AttestStep) -> AmodbClientError {
        let message = response.errorBody.flatMap { body -> String? in
            let text = body.statusMessage.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !text.isEmpty else { return nil }
            return text.count > 300 ? String(text.prefix(300)) + "…" : text
        }
        let retryAfter =
            [429, 503].contains(response.status) ? RetryAfter.delay(response.headers["Retry-After"]) : nil
        return AmodbClientError(
            .attestationRefused(step, status: response.status, serverMessage: message, retryAfter: retryAfter))
    }

    /// What a provider's failure to `action` stands for: cancelled, App Attest unsupported,
    /// or what the provider said (cut at 200 characters).
    private static func deviceError(_ error: any Error, failedTo action: String) -> AmodbClientError {
        if error is CancellationError { return AmodbClientError(.cancelled) }
        if let unsupported = error as? AppAttestationUnsupportedError {
            return AmodbClientError(.attestationUnavailable(unsupported.description))
        }
        let said = String(describing: error)
        let detail = said.count > 200 ? String(said.prefix(200)) + "…" : said
        return AmodbClientError(.attestationUnavailable("the device failed to \(action) (\(detail))"))
    }
}
