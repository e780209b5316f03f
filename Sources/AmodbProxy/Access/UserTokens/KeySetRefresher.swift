import AmodbCrypto
import Foundation
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Holds an identity provider's key set (`AMODB_JWT_JWKS_URL`) and keeps it current, off
/// the request path: the set is fetched at start, again every `refreshSeconds` (an hour),
/// and when a token names a `kid` the set lacks (at most once per `kidMissInterval`), which
/// is how a rotation is picked up within seconds. A failed fetch keeps the last good set,
/// and so does a document in which no key is usable (each key skipped, for a reason); until
/// a first set is held, fetches are retried after 1 s, doubling to 30 s, and the tokens
/// that need the set get 503 with `Retry-After` (`/readyz` says why). The keys the latest
/// document lists but the proxy does not use are logged when they change, shown by
/// `/readyz`, and named in the refusal of a token whose `kid` is one of them.
///
/// Each change of the keys held (a rotation, not an hourly fetch of the same set) starts a
/// new `generation`: a token remembered as verified under an earlier one is verified again.
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
        /// The set held: the last document with at least one usable key.
        var keys: JSONWebKeySet?
        /// The keys the latest document skipped, with why.
        var skipped: [JSONWebKeySet.SkippedKey] = []
        /// Counts the changes of the keys held.
        var generation: UInt64 = 0
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
    /// `State.generation`, readable without the lock (stored under it).
    private let currentGeneration = Atomic<UInt64>(0)

    /// A refresher of the set at `url`; `timeout` and `maxBytes` as for amodb's calls (the
    /// body cap never above `JSONWebKeySet.maxBytes`).
    init(url: URL, timeout: Double, maxBytes: Int, refreshSeconds: Double, clock: any ProxyClock, logger: ProxyLogger) {
        // The settings refuse a URL with credentials; one built another way still sends and
        // shows none.
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        components?.user = nil
        components?.password = nil
        self.url = components?.url ?? url
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

    /// The generation of the keys held now (see the type's comment).
    var generation: UInt64 { currentGeneration.load(ordering: .acquiring) }

    /// The key named `kid` in the set held, and the generation it belongs to. A `kid` the
    /// latest document lists but skipped is refused with the reason; an unknown `kid` starts
    /// a fetch of the set, unless one began within `kidMissInterval`; without any set held
    /// the token waits (503). A token naming no `kid` is malformed, whatever the set holds:
    /// no fetch and no wait would find it a key.
    func key(for kid: String?, now: Double) throws(TokenRefusal) -> (key: PublicKey, generation: UInt64) {
        guard let kid else { throw .malformed(.missingKeyID) }
        enum Lookup {
            case key(PublicKey, UInt64)
            case skipped(String)
            case noSet
            case unknown(fetch: Bool, underway: Bool)
        }
        let lookup = state.withLock { state -> Lookup in
            if let key = state.keys?.keys[kid] { return .key(key, state.generation) }
            if let skipped = state.skipped.first(where: { $0.keyID == kid }) {
                return .skipped(skipped.reason)
            }
            guard state.keys != nil else { return .noSet }
            if state.fetching { return .unknown(fetch: false, underway: true) }
            guard now - state.lastKidMiss >= Self.kidMissInterval else {
                return .unknown(fetch: false, underway: false)
            }
            state.lastKidMiss = now
            return .unknown(fetch: true, underway: true)
        }
        switch lookup {
        case .key(let key, let generation): return (key, generation)
        case .skipped(let reason): throw .unusableKey(reason)
        case .noSet: throw .noKeySet
        case .unknown(let fetch, let underway):
            if fetch { tasks.run(.background) { [self] in _ = await self.fetch() } }
            throw .unknownKeyID(refetching: underway)
        }
    }

    /// Why tokens cannot be verified yet (no set with a usable key held), for `/readyz`;
    /// `nil` once a set is held.
    var notReadyReason: String? {
        state.withLock { state in
            state.keys == nil ? "no key set from AMODB_JWT_JWKS_URL yet: \(state.problem ?? "fetching")" : nil
        }
    }

    /// The keys the latest document listed but the proxy does not use, for `/readyz`.
    var skippedKeys: [JSONWebKeySet.SkippedKey] {
        state.withLock { $0.skipped }
    }

    /// The key set as the status page shows it: the `kid`s of the keys in use, the listed
    /// keys skipped (with why), and why none is held yet (`nil` once one is).
    var summary: (keyIDs: [String], skipped: [JSONWebKeySet.SkippedKey], problem: String?) {
        state.withLock { state in
            (
                (state.keys?.keys.keys).map { $0.sorted() } ?? [], state.skipped,
                state.keys == nil ? state.problem ?? "fetching" : nil
            )
        }
    }

    /// Seconds until the next fetch while no set is held, for a 503's `Retry-After` (1 to 60).
    func retryAfter(now: Double) -> Double {
        let due = state.withLock { $0.nextAttempt } ?? now + 1
        let wait = due - now
        return wait.isFinite ? min(max(wait, 1), 60) : 1
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
                let keys = try JSONWebKeySet(parsing: response.body)
                outcome = keys.keys.isEmpty ? .failure(.noUsableKey(keys.skipped)) : .success(keys)
            } catch {
                outcome = .failure(.document(error))
            }
        }
        let (held, skippedChanged) = state.withLock { state -> (Bool, Bool) in
            state.fetching = false
            let skipped: [JSONWebKeySet.SkippedKey]?
            switch outcome {
            case .success(let keys):
                if keys.material != state.keys?.material {
                    state.generation += 1
                    currentGeneration.store(state.generation, ordering: .releasing)
                }
                state.keys = keys
                state.problem = nil
                skipped = keys.skipped
            case .failure(let problem):
                state.problem = problem.description
                if case .noUsableKey(let listed) = problem { skipped = listed } else { skipped = nil }
            }
            guard let skipped, skipped != state.skipped else { return (state.keys != nil, false) }
            state.skipped = skipped
            return (state.keys != nil, true)
        }
        if skippedChanged {
            for key in skippedKeys {
                logger.warning(
                    "key set lists a key that is not used",
                    ["kid": key.keyID ?? "", "index": String(key.index), "reason": key.reason])
            }
        }
        switch outcome {
        case .success(let keys):
            logger.info(
                "key set fetched",
                ["keys": String(keys.keys.count), "skipped": String(keys.skipped.count), "url": url.absoluteString])
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
        /// A document whose every key was skipped: as good as none.
        case noUsableKey([JSONWebKeySet.SkippedKey])

        var description: String {
            switch self {
            case .transport(.timedOut): "the fetch timed out"
            case .transport(.tooLarge): "the key set is larger than \(JSONWebKeySet.maxBytes) bytes"
            case .transport(.unreachable): "the key set's host could not be reached"
            case .status(let status): "the key set's host answered \(status)"
            case .document(let problem): problem.description
            case .noUsableKey(let skipped):
                "the key set has no usable key ("
                    + (skipped.isEmpty
                        ? "it lists none"
                        : skipped.map { "\($0.keyID.map { "kid \($0)" } ?? "key \($0.index)"): \($0.reason)" }.joined(
                            separator: "; ")) + ")"
            }
        }
    }
}
