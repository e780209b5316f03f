public import AmodbHTTP
import AmodbModels
import Dispatch
import Synchronization

/// A faithful local stand-in for amodb: the same paths, JSON shapes, keys, statuses,
/// limit headers and per-key sliding-window rate limit, with deterministic data and
/// hooks that let tests script failures and see exactly what reached "amodb".
///
/// It is an `HTTPResponder`: tests call `respond(to:later:)` directly, and `start()`
/// serves it over loopback with the project's own `HTTPServer` (`amodb-proxy --sandbox`).
public final class AmodbSandbox: HTTPResponder, Sendable {
    /// The keys, plan limit, latency and clock this sandbox was made with.
    public let configuration: Configuration

    private let state = Mutex(SandboxState())
    private let running = Mutex<Running?>(nil)
    private let bodies: CatalogBodies

    /// The server serving this sandbox and where it listens.
    private struct Running: Sendable {
        var server: HTTPServer
        var host: String
        var port: Int
    }

    /// A sandbox with the given configuration (the default accepts `sandbox-key`, 40 calls a minute).
    public init(configuration: Configuration = .init()) {
        self.configuration = configuration
        self.bodies = .standard
    }

    // MARK: Serving

    /// Starts serving on `host:port` (port 0 picks a free port) and returns the bound port.
    public func start(host: String = "127.0.0.1", port: Int = 0) throws -> Int {
        precondition(running.withLock { $0 == nil }, "AmodbSandbox.start() called twice")
        // What the server refuses itself reads like amodb's errors too, `status_code` the HTTP status.
        let server = HTTPServer(
            configuration: .init(
                host: host, port: port,
                errorResponse: { Self.errorResponse(AmodbFailure(status: $0, code: $0, message: $1)) },
                queueLabel: "amodb-sandbox"),
            responder: self)
        let bound = try server.start()
        running.withLock { $0 = Running(server: server, host: host, port: bound) }
        return bound
    }

    /// The port the sandbox listens on, or `nil` before `start()`.
    public var port: Int? {
        running.withLock { $0?.port }
    }

    /// The API root to point a client or the proxy at, e.g. `http://127.0.0.1:54321/3`.
    /// Only valid after `start()`.
    public var baseURL: String {
        guard let running = running.withLock({ $0 }) else {
            preconditionFailure("AmodbSandbox.baseURL read before start()")
        }
        let host: String
        switch running.host {
        case "", "0.0.0.0": host = "127.0.0.1"
        case "::": host = "[::1]"
        case let literal where literal.contains(":"): host = "[\(literal)]"
        case let name: host = name
        }
        return "http://\(host):\(running.port)/3"
    }

    /// Stops the server, letting answers in flight finish for up to `gracePeriod` seconds.
    public func shutdown(gracePeriod: Double = 1) async {
        let server = running.withLock { running -> HTTPServer? in
            defer { running = nil }
            return running?.server
        }
        await server?.shutdown(gracePeriod: gracePeriod)
    }

    // MARK: Hooks for tests

    /// Plays `behaviour` for the next `times` answers on `path` (`/3/movie/550`; a query is
    /// ignored), or until `clearScripts()` when `times` is `nil`. Scripts for one path play
    /// in the order given; the path `*` applies to every path without a script of its own.
    /// A script is used only by calls that pass the key check and the rate limit.
    public func script(_ path: String, _ behaviour: Behaviour, times: Int? = nil) {
        let bare =
            path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? path
        state.withLock { $0.script(bare, behaviour, times: times) }
    }

    /// Removes every script: all paths answer normally again.
    public func clearScripts() {
        state.withLock { $0.scripts = [:] }
    }

    /// Requests received for a path (without query), whatever their answer.
    public func requestCount(path: String) -> Int {
        state.withLock { $0.requestCounts[path] ?? 0 }
    }

    /// Requests received in all, whatever their answer.
    public var totalRequestCount: Int {
        state.withLock { $0.totalRequests }
    }

    /// The latest requests received (up to `configuration.recordLimit`), oldest first.
    public var receivedRequests: [ReceivedRequest] {
        state.withLock { $0.received }
    }

    /// Every movie id the catalogue answers `/3/movie/{id}` for, ascending: a test that needs
    /// many distinct paths amodb answers with 200 takes them from here.
    public var movieIDs: [Int] {
        bodies.catalog.movies.keys.sorted()
    }

    /// Forgets request counts and recorded requests; scripts and rate windows stay.
    public func resetCounters() {
        state.withLock { $0.resetCounters() }
    }

    /// Empties every key's rate window, as if a minute had passed with no calls.
    public func resetRateLimits() {
        state.withLock { $0.windows = [:] }
    }

    /// Requests that arrive from now on are counted and decided as usual, but their answers
    /// wait until `release()`: a test can act while a call is known to be in flight at
    /// "amodb" (`heldCount` says how many are waiting), without guessing with sleeps.
    public func hold() {
        state.withLock { $0.holding = true }
    }

    /// Sends every held answer (after its latency or scripted delay, as usual); later
    /// requests are answered at once again until the next `hold()`.
    public func release() {
        let waiting = state.withLock { state -> [@Sendable () -> Void] in
            state.holding = false
            defer { state.held = [] }
            return state.held
        }
        for send in waiting { send() }
    }

    /// How many requests are waiting on `hold()` now.
    public var heldCount: Int {
        state.withLock { $0.held.count }
    }

    // MARK: Answering

    /// Answers a request as amodb would: at once, or (with a latency or a scripted delay)
    /// by returning `nil` and handing it to the delivery `later()` makes from a Dispatch
    /// timer, never blocking a thread. While `hold()` is in force, it waits for `release()`.
    public func respond(to request: HTTPRequest, context: ResponderContext, later: () -> ResponseDelivery)
        -> HTTPResponse?
    {
        respond(to: request, later: later)
    }

    /// The same, called from anywhere (tests ask the stand-in directly).
    public func respond(to request: HTTPRequest, later: () -> ResponseDelivery) -> HTTPResponse? {
        let deliver = later()
        let now = configuration.now()
        let plan = state.withLock { state in decide(request, at: now, state: &state) }
        let response = makeResponse(plan, for: request)
        let delay = plan.delay
        let send: @Sendable () -> Void = {
            guard delay > .zero else { return deliver(response) }
            DispatchQueue.global().asyncAfter(deadline: .now() + Self.dispatchInterval(delay)) {
                deliver(response)
            }
        }
        let held = state.withLock { state -> Bool in
            guard state.holding else { return false }
            state.held.append(send)
            return true
        }
        if held { return nil }
        guard delay > .zero else { return response }
        send()
        return nil
    }

    /// What to answer, decided under the lock: counts, key, window and script.
    private struct Plan {
        enum Outcome {
            /// Refused before reaching the data.
            case refused(AmodbFailure, retryAfter: Int?)
            /// Admitted; answer the data, shaped by a scripted behaviour if any.
            case admitted(Behaviour?)
        }

        var outcome: Outcome
        var limits: RateLimitHeaders?
        var delay: Duration
    }

    private func decide(_ request: HTTPRequest, at now: ContinuousClock.Instant, state: inout SandboxState) -> Plan {
        state.record(request, at: now, limit: configuration.recordLimit)
        let latency = configuration.latency
        guard request.method == "GET" || request.method == "HEAD" else {
            return Plan(outcome: .refused(.methodNotAllowed, retryAfter: nil), delay: latency)
        }
        guard let key = Self.presentedKey(in: request), configuration.knows(key) else {
            return Plan(outcome: .refused(.invalidKey, retryAfter: nil), delay: latency)
        }
        guard !configuration.expiredKeys.contains(key) else {
            return Plan(outcome: .refused(.planExpired, retryAfter: nil), delay: latency)
        }
        let limit = configuration.requestsPerMinute
        switch state.admit(key: key, limit: limit, at: now) {
        case .refused(let count, let retryAfter):
            state.markLastOverLimit()
            return Plan(
                outcome: .refused(.overLimit(count: count, limit: limit), retryAfter: retryAfter),
                limits: RateLimitHeaders(limit: limit, remaining: 0, reset: retryAfter), delay: latency)
        case .admitted(let remaining, let reset):
            let behaviour = state.nextBehaviour(for: request.path)
            var delay = latency
            if case .delay(let scripted) = behaviour { delay = scripted }
            return Plan(
                outcome: .admitted(behaviour),
                limits: RateLimitHeaders(limit: limit, remaining: remaining, reset: reset), delay: delay)
        }
    }

    /// Builds the response for a plan, outside the lock.
    private func makeResponse(_ plan: Plan, for request: HTTPRequest) -> HTTPResponse {
        var response: HTTPResponse
        var limits = plan.limits
        switch plan.outcome {
        case .refused(let failure, let retryAfter):
            response = Self.errorResponse(failure, retryAfter: retryAfter)
        case .admitted(nil), .admitted(.delay):
            response = answer(request)
        case .admitted(.status(let status)):
            let limit = configuration.requestsPerMinute
            response = Self.errorResponse(.forStatus(status, limit: limit), retryAfter: status == 429 ? 1 : nil)
            if status == 429 { limits = RateLimitHeaders(limit: limit, remaining: 0, reset: 1) }
        case .admitted(.rateLimited(let retryAfter)):
            let limit = configuration.requestsPerMinute
            let seconds = max(0, retryAfter)
            response = Self.errorResponse(.overLimit(count: limit + 1, limit: limit), retryAfter: seconds)
            limits = RateLimitHeaders(limit: limit, remaining: 0, reset: max(1, seconds))
        case .admitted(.truncatedJSON):
            response = answer(request)
            response.body = Array(response.body.prefix(response.body.count / 2))
        case .admitted(.droppedConnection):
            response = answer(request)
            response.connection = .abortAfterBodyBytes(response.body.count / 2)
        case .admitted(.body(let status, let json)):
            response = .json(status, Array(json.utf8))
        case .admitted(.redirect(let status, let location)):
            response = .json(status, Array(#"{"success":false,"status_message":"moved"}"#.utf8))
            response.headers.set("Location", location)
        }
        limits?.apply(to: &response.headers)
        return response
    }

    /// The data for a GET under `/3`, or amodb's error for it.
    private func answer(_ request: HTTPRequest) -> HTTPResponse {
        guard request.path.hasPrefix("/3/"), let route = Route(path: String(request.path.dropFirst(2))) else {
            return Self.errorResponse(.notFound)
        }
        let amodbRequest: AmodbRequest
        do {
            amodbRequest = try AmodbRequest(route: route, query: request.query.items)
        } catch {
            return Self.errorResponse(.invalidParameter(error))
        }
        let body: [UInt8]?
        do {
            body = try bodies.body(for: amodbRequest)
        } catch {
            return Self.errorResponse(.internalError)
        }
        guard let body else { return Self.errorResponse(.notFound) }
        var headers = HTTPHeaders()
        headers.set("Cache-Control", Self.cacheControl(for: route))
        return .json(200, body, headers: headers)
    }

    /// amodb's edge caches lists and searches for 30 minutes; details change rarely (an
    /// hour), the configuration and the genres hardly ever (a day).
    static func cacheControl(for route: Route) -> String {
        switch route.entry.lifetime {
        case .list: "public, max-age=1800"
        case .details: "public, max-age=3600"
        case .reference: "public, max-age=86400"
        }
    }

    /// An amodb-style error: JSON body, `Cache-Control: no-store`, `Retry-After` if given,
    /// `Allow` on 405.
    static func errorResponse(_ failure: AmodbFailure, retryAfter: Int? = nil) -> HTTPResponse {
        let body = (try? SandboxJSON.encode(failure.body)) ?? Array(#"{"success":false}"#.utf8)
        var headers = HTTPHeaders()
        headers.set("Cache-Control", "no-store")
        if let retryAfter { headers.set("Retry-After", String(retryAfter)) }
        if failure.status == 405 { headers.set("Allow", "GET, HEAD") }
        return .json(failure.status, body, headers: headers)
    }

    /// The key a request presents: `Authorization: Bearer <key>` (scheme case-insensitive,
    /// RFC 9110 §11.1), else `api_key=<key>`. Another scheme presents no usable key.
    static func presentedKey(in request: HTTPRequest) -> String? {
        guard let authorization = request.headers["Authorization"] else { return request.queryValue("api_key") }
        let isBlank = { (character: Character) in character == " " || character == "\t" }
        let credentials = authorization.drop(while: isBlank)
        guard let schemeEnd = credentials.firstIndex(where: isBlank),
            credentials[..<schemeEnd].lowercased() == "bearer"
        else { return nil }
        let rest = credentials[schemeEnd...].drop(while: isBlank)
        let token = rest.prefix { !isBlank($0) }
        guard rest.dropFirst(token.count).allSatisfy(isBlank) else { return nil }  // `Bearer a b`
        return String(token)
    }

    /// A `Duration` as a Dispatch interval, capped at a day.
    static func dispatchInterval(_ duration: Duration) -> DispatchTimeInterval {
        let (seconds, attoseconds) = duration.components
        let capped = min(max(seconds, 0), 86_400)
        return .nanoseconds(Int(capped) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
    }
}
