import AmodbCrypto
import AmodbTestSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The proxy's App Attest endpoints and one API path, on 127.0.0.1, port 0, speaking the
/// protocol an ``AppAttestSession`` is written to: one-time challenges, keys attested once,
/// sessions for an assertion over a fresh challenge, `status_code` 1001 for a key it does not
/// know, and `GET <prefix>/3/configuration` for a session token it issued.
///
/// It checks what a real proxy checks of ``FakeAttestationProvider``'s proofs: that each
/// signs SHA-256 of the challenge's UTF-8 bytes (hashed here with AmodbCrypto, not the
/// client's own SHA-256) for the key named. A test can script the next answers of an
/// endpoint, forget every key, refuse every token, or hold challenges until released.
final class AttestStandIn: ScopedServer {
    /// Which endpoint a request was for.
    enum Endpoint: String, Sendable {
        case challenge, keys, session, api, other
    }

    /// An answer a test scripts.
    struct Reply: Sendable {
        var status: Int
        var headers: [String: String] = [:]
        var body: String

        /// An amodb-shaped error body.
        static func error(_ status: Int, code: Int? = nil, _ message: String, headers: [String: String] = [:])
            -> Reply
        {
            Reply(
                status: status, headers: headers,
                body: #"{"status_code":\#(code ?? status),"status_message":"\#(message)","success":false}"#)
        }
    }

    /// A request as it arrived.
    struct Request: Sendable {
        let method: String
        let path: String
        let endpoint: Endpoint
        /// Header fields, names lowercased.
        let headers: [String: String]
        let body: [UInt8]
    }

    private struct State {
        var requests: [Request] = []
        var challengesIssued: [String] = []
        var openChallenges: Set<String> = []
        var knownKeys: Set<String> = []
        var attestedKeys: [String] = []
        var tokensIssued: [String] = []
        var validTokens: Set<String> = []
        var scripted: [Endpoint: [Reply]] = [:]
        var tokenLife = 3600
        var holding = false
        var held = 0
    }

    private let listener: ThreadedListener
    private let state = Locked(State())
    /// The path before `/3` and `/attest`: empty, or `/x` and the like.
    let prefix: String

    /// Listens on a port the kernel picks, serving under `prefix`.
    init(prefix: String = "") throws {
        self.prefix = prefix
        listener = try ThreadedListener()
        listener.start { [self] fd in serve(fd) }
    }

    /// The API root to give ``AmodbClient`` and ``AppAttestSession``.
    var baseURL: URL { URL(string: "http://127.0.0.1:\(listener.port)\(prefix)/3")! }

    func shutdown() async {
        release()
        await listener.shutdown()
    }

    // MARK: What a test changes

    /// The next requests to `endpoint` get these answers, in order, before the protocol's own.
    func script(_ endpoint: Endpoint, _ replies: Reply...) {
        state.withLock { $0.scripted[endpoint, default: []].append(contentsOf: replies) }
    }

    /// The `expires_in` of sessions from now on, in seconds.
    func setTokenLife(_ seconds: Int) {
        state.withLock { $0.tokenLife = seconds }
    }

    /// Forgets every key, as a proxy whose key records were lost.
    func forgetKeys() {
        state.withLock { $0.knownKeys = [] }
    }

    /// Refuses every token issued so far, as a proxy whose session secret changed.
    func refuseTokens() {
        state.withLock { $0.validTokens = [] }
    }

    /// Challenge requests arriving from now on wait until `release()`.
    func hold() {
        state.withLock { $0.holding = true }
    }

    /// Lets held challenge requests be answered.
    func release() {
        state.withLock { $0.holding = false }
    }

    // MARK: What a test reads

    /// Every request, in order.
    var requests: [Request] { state.current.requests }
    /// How many requests went to `endpoint`.
    func count(_ endpoint: Endpoint) -> Int { state.current.requests.filter { $0.endpoint == endpoint }.count }
    /// The challenges given out, in order.
    var challenges: [String] { state.current.challengesIssued }
    /// The keys whose attestation was accepted, in order.
    var attestedKeys: [String] { state.current.attestedKeys }
    /// The session tokens given out, in order.
    var tokens: [String] { state.current.tokensIssued }
    /// Challenge requests waiting on `hold()` now.
    var heldCount: Int { state.current.held }

    // MARK: Serving

    private func serve(_ fd: Int32) {
        guard let request = read(fd) else { return }
        state.withLock { $0.requests.append(request) }
        if request.endpoint == .challenge {
            state.withLock { $0.held += $0.holding ? 1 : 0 }
            while state.current.holding, !listener.isStopped { usleep(1000) }
            state.withLock { $0.held = max(0, $0.held - 1) }
        }
        let scripted = state.withLock { state -> Reply? in
            guard var queue = state.scripted[request.endpoint], !queue.isEmpty else { return nil }
            let reply = queue.removeFirst()
            state.scripted[request.endpoint] = queue
            return reply
        }
        write(scripted ?? answer(request), to: fd)
    }

    /// What the protocol answers.
    private func answer(_ request: Request) -> Reply {
        switch (request.method, request.endpoint) {
        case ("GET", .challenge):
            let challenge = state.withLock { state -> String in
                // Not ASCII, so that hashing anything but its UTF-8 bytes is caught.
                let challenge = "challenge №\(state.challengesIssued.count + 1) \(UUID().uuidString)"
                state.challengesIssued.append(challenge)
                state.openChallenges.insert(challenge)
                return challenge
            }
            return Reply(
                status: 200, headers: ["Cache-Control": "no-store"],
                body: #"{"challenge":"\#(challenge)","expires_in":120}"#)
        case ("POST", .keys):
            return attest(request)
        case ("POST", .session):
            return startSession(request)
        case ("GET", .api):
            let token = request.headers["authorization"].flatMap {
                $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil
            }
            guard let token, state.current.validTokens.contains(token) else {
                return .error(
                    401, "The session token is not valid.",
                    headers: ["WWW-Authenticate": #"Bearer realm="amodb-proxy", error="invalid_token""#])
            }
            return Reply(status: 200, body: Fixtures.configuration)
        default:
            return .error(404, "The resource you requested could not be found.")
        }
    }

    private struct KeyAttestation: Decodable {
        let key_id: String
        let attestation: String
        let challenge: String
    }

    private struct SessionRequest: Decodable {
        let key_id: String
        let assertion: String
        let challenge: String
    }

    private func attest(_ request: Request) -> Reply {
        guard request.headers["content-type"] == "application/json",
            let body = try? JSONDecoder().decode(KeyAttestation.self, from: Data(request.body)),
            let attestation = Data(base64Encoded: body.attestation)
        else { return .error(400, "The body is not an attestation.") }
        guard takeChallenge(body.challenge) else { return .error(401, "The challenge is unknown, used or expired.") }
        guard
            String(decoding: attestation, as: UTF8.self)
                == FakeAttestationProvider.proof(
                    "attestation", keyID: body.key_id, clientDataHash: Self.clientDataHash(body.challenge))
        else { return .error(401, "The attestation does not sign this challenge for this key.") }
        let known = state.withLock { state -> Bool in
            guard !state.attestedKeys.contains(body.key_id) else { return true }
            state.attestedKeys.append(body.key_id)
            state.knownKeys.insert(body.key_id)
            return false
        }
        guard !known else { return .error(401, "This key was attested before.") }
        return Reply(status: 201, body: #"{"key_id":"\#(body.key_id)","environment":"development"}"#)
    }

    private func startSession(_ request: Request) -> Reply {
        guard request.headers["content-type"] == "application/json",
            let body = try? JSONDecoder().decode(SessionRequest.self, from: Data(request.body)),
            let assertion = Data(base64Encoded: body.assertion)
        else { return .error(400, "The body is not an assertion.") }
        guard takeChallenge(body.challenge) else { return .error(401, "The challenge is unknown, used or expired.") }
        guard state.current.knownKeys.contains(body.key_id) else {
            return .error(401, code: 1001, "The key is not known; attest a new key.")
        }
        guard
            String(decoding: assertion, as: UTF8.self)
                == FakeAttestationProvider.proof(
                    "assertion", keyID: body.key_id, clientDataHash: Self.clientDataHash(body.challenge))
        else { return .error(401, "The assertion does not sign this challenge for this key.") }
        let (token, life) = state.withLock { state -> (String, Int) in
            let token = "session-token-\(state.tokensIssued.count + 1)"
            state.tokensIssued.append(token)
            state.validTokens.insert(token)
            return (token, state.tokenLife)
        }
        return Reply(status: 200, body: #"{"token":"\#(token)","expires_in":\#(life)}"#)
    }

    /// Whether `challenge` was given out and not used yet; it is used now.
    private func takeChallenge(_ challenge: String) -> Bool {
        state.withLock { $0.openChallenges.remove(challenge) != nil }
    }

    /// SHA-256 of the challenge's UTF-8 bytes, by AmodbCrypto.
    static func clientDataHash(_ challenge: String) -> Data {
        Data(SHA256.hash(Array(challenge.utf8)))
    }

    /// Reads one request: the head, then `Content-Length` bytes of body.
    private func read(_ fd: Int32) -> Request? {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        let terminator = Array("\r\n\r\n".utf8)
        var headEnd = bytes.firstRange(of: terminator)
        while headEnd == nil {
            let count = BlockingSocket.receive(fd, into: &chunk)
            guard count > 0 else { return nil }
            bytes.append(contentsOf: chunk[..<count])
            headEnd = bytes.firstRange(of: terminator)
        }
        guard let headEnd else { return nil }
        let head = String(decoding: bytes[..<headEnd.lowerBound], as: UTF8.self)
        var body = Array(bytes[headEnd.upperBound...])
        let lines = head.components(separatedBy: "\r\n")
        let requestLine = lines[0].split(separator: " ")
        guard requestLine.count == 3 else { return nil }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        if headers["expect"]?.lowercased() == "100-continue" {
            _ = BlockingSocket.sendAll(fd, Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
        }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        while body.count < length {
            let count = BlockingSocket.receive(fd, into: &chunk)
            guard count > 0 else { return nil }
            body.append(contentsOf: chunk[..<count])
        }
        let path = String(requestLine[1])
        return Request(
            method: String(requestLine[0]), path: path, endpoint: endpoint(of: path), headers: headers, body: body)
    }

    private func endpoint(of path: String) -> Endpoint {
        switch path {
        case prefix + "/attest/challenge": .challenge
        case prefix + "/attest/keys": .keys
        case prefix + "/attest/session": .session
        case prefix + "/3/configuration": .api
        default: .other
        }
    }

    private func write(_ reply: Reply, to fd: Int32) {
        let body = Array(reply.body.utf8)
        var head = "HTTP/1.1 \(reply.status) Stand-in\r\nContent-Type: application/json\r\n"
        head += "Content-Length: \(body.count)\r\nConnection: close\r\n"
        for (name, value) in reply.headers { head += "\(name): \(value)\r\n" }
        _ = BlockingSocket.sendAll(fd, Array((head + "\r\n").utf8) + body)
    }
}
