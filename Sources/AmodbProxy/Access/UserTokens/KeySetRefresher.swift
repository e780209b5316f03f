import AmodbCrypto
import Foundation
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Holds an identity provider's key set (`AMODB_JWT_JWKS_URL`) and keeps it current, off
/// the request path: the set is fetched at start, again every `refreshSeconds` (an hour),
/// and when a token names a `kid` the set lacks (at most once per `kidMissInterval`), which
/// is how a rotation is picked up within seconds. A failed fetch keeps the last good set;
/// until a first set is held, fetches are retried after 1 s, doubling to 30 s, and the
/// tokens that need the set get 503 with `Retry-After` (`/readyz` says why).
///
/// The fetch goes through a `BoundedSession` (a deadline for the whole call, a capped body,
/// no redirects) and sends no credentials.
final class KeySetRefresher: Sendable {
    /// The shortest time between two fetches for an unknown `kid`, in seconds: a flood of
    /// made-up kids costs the provider one fetch per interval.
    static let kidMissInterval: Double = 30
    /// Retries while no set is held: the first wait and the longest, in seconds.
    static let firstRetry: Double = 1, longestRetry: Double = 30

    private struct State {
        var keys: JSONWebKeySet?
        /// Why the last fetch failed; `nil` after a success.
        var problem: String? = "the key set has not been fetched yet"
        var fetching = false
        /// When the last fetch for an unknown kid began (clock seconds).
        var lastKidMiss = -Double.infinity
        /// When the next scheduled fetch is due, while no set is held.
        var nextAttempt: Double?
    }

    private let url: URL
    private let session: BoundedSession
    private let clock: any ProxyClock
    private let logger: ProxyLogger
    private let refreshSeconds: Double
    private let tasks: BackgroundTasks
    private let state = Mutex(State())

    /// A refresher of the set at `url`; `timeout` and `maxBytes` as for amodb's calls (the
    /// body cap never above `JSONWebKeySet.maxBytes`).
    init(url: URL, timeout: Double, maxBytes: Int, refreshSeconds: Double, clock: any ProxyClock, logger: ProxyLogger) {
        self.url = url
        session = BoundedSession(
            timeout: timeout, maxBytes: min(maxBytes, JSONWebKeySet.maxBytes + 1), maxConnections: 2)
        self.clock = clock
        self.logger = logger
        self.refreshSeconds = refreshSeconds
        tasks = BackgroundTasks(clock: clock)
    }

    /// Fetches the set now and keeps refreshing it until `stop()`.
    func start() {
        tasks.run(.background) { [self] in
            var retry = Self.firstRetry
            while true {
                let held = await fetch()
                let wait = held ? refreshSeconds : retry
                retry = held ? Self.firstRetry : min(retry * 2, Self.longestRetry)
                state.withLock { $0.nextAttempt = held ? nil : clock.now() + wait }
                guard await tasks.pause(wait) else { return }
            }
        }
    }

    /// Ends the refreshing and waits (briefly) for a fetch in flight.
    func stop() async {
        await tasks.drain(within: 1)
    }

    /// The key named `kid` in the set held. An unknown `kid` starts a fetch of the set,
    /// unless one began within `kidMissInterval`; without any set held the token waits (503).
    func key(for kid: String?, now: Double) throws(TokenRefusal) -> PublicKey {
        enum Lookup {
            case key(PublicKey)
            case noSet
            case unknown(fetch: Bool, underway: Bool)
        }
        let lookup = state.withLock { state -> Lookup in
            guard let keys = state.keys else { return .noSet }
            if let kid, let key = keys.keys[kid] { return .key(key) }
            if state.fetching { return .unknown(fetch: false, underway: true) }
            guard now - state.lastKidMiss >= Self.kidMissInterval else {
                return .unknown(fetch: false, underway: false)
            }
            state.lastKidMiss = now
            return .unknown(fetch: true, underway: true)
        }
        switch lookup {
        case .key(let key): return key
        case .noSet: throw .noKeySet
        case .unknown(let fetch, let underway):
            if fetch { tasks.run(.background) { [self] in _ = await self.fetch() } }
            throw .unknownKeyID(refetching: underway)
        }
    }

    /// Why tokens cannot be verified yet (no set held), for `/readyz`; `nil` once a set is held.
    var notReadyReason: String? {
        state.withLock { state in
            state.keys == nil ? "no key set from AMODB_JWT_JWKS_URL yet: \(state.problem ?? "fetching")" : nil
        }
    }

    /// Seconds until the next fetch while no set is held, for a 503's `Retry-After` (at least 1).
    func retryAfter(now: Double) -> Int {
        let due = state.withLock { $0.nextAttempt } ?? now + 1
        return (due - now).checkedInt(.up, clampedTo: 1...60) ?? 1
    }

    /// Fetches the set once (unless a fetch is under way); whether a set is held afterwards.
    @discardableResult
    func fetch() async -> Bool {
        let begun = state.withLock { state -> Bool in
            if state.fetching { return false }
            state.fetching = true
            return true
        }
        guard begun else { return state.withLock { $0.keys != nil } }
        var request = session.request(for: url)
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.setValue("amodb-proxy", forHTTPHeaderField: "User-Agent")
        let outcome: Result<JSONWebKeySet, KeySetFetchProblem>
        switch await session.get(request) {
        case .failure(let error): outcome = .failure(.transport(error))
        case .success(let response) where response.status != 200: outcome = .failure(.status(response.status))
        case .success(let response):
            do throws(JSONWebKeySet.Problem) {
                outcome = .success(try JSONWebKeySet(parsing: response.body))
            } catch {
                outcome = .failure(.document(error))
            }
        }
        let held = state.withLock { state -> Bool in
            state.fetching = false
            switch outcome {
            case .success(let keys):
                state.keys = keys
                state.problem = nil
            case .failure(let problem):
                state.problem = problem.description
            }
            return state.keys != nil
        }
        switch outcome {
        case .success(let keys):
            logger.info("key set fetched", ["keys": String(keys.keys.count), "url": url.absoluteString])
        case .failure(let problem):
            logger.warning(
                held ? "key set fetch failed; keeping the set held" : "key set fetch failed; user tokens wait for it",
                ["problem": problem.description, "url": url.absoluteString])
        }
        return held
    }

    /// Why a fetch gave no set.
    private enum KeySetFetchProblem: Error, CustomStringConvertible {
        case transport(UpstreamError)
        case status(Int)
        case document(JSONWebKeySet.Problem)

        var description: String {
            switch self {
            case .transport(.timedOut): "the fetch timed out"
            case .transport(.tooLarge): "the key set is larger than \(JSONWebKeySet.maxBytes) bytes"
            case .transport(.unreachable): "the key set's host could not be reached"
            case .status(let status): "the key set's host answered \(status)"
            case .document(let problem): problem.description
            }
        }
    }
}
