import AmodbCompression
import AmodbHTTP
import AmodbModels
@testable import AmodbProxy
import AmodbTestSupport
import Dispatch
import Foundation
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(1)))
struct CachingForwarderTests {
    @Test func storesTheFirstAnswerAndServesItAfterwards() async throws {
        let fetcher = ScriptedUpstream()
        let harness = try ProxyHarness(fetcher: fetcher)
        try await withServer(harness) { _ in
            let first = try await harness.get("/3/trending/movie/week")
            #expect(first.status == 200)
            #expect(first.header("Cache-Status")?.hasPrefix("amodb-proxy; fwd=miss") == true)
            #expect(first.header("Cache-Status")?.contains("stored") == true)
            #expect(first.header("Content-Type") == "application/json;charset=utf-8")
            #expect(first.text == ScriptedUpstream.moviePage)

            let second = try await harness.get("/3/trending/movie/week")
            #expect(second.status == 200)
            #expect(second.header("Cache-Status")?.hasPrefix("amodb-proxy; hit") == true)
            #expect(second.body == first.body)
            #expect(second.header("Cache-Control") == "public, max-age=\(1800 - Int(second.header("Age") ?? "0")!)")
            #expect(fetcher.calls == ["/trending/movie/week"])
        }
    }

    @Test func reportsAgeAndRemainingFreshness() async throws {
        let fetcher = ScriptedUpstream()
        let clock = ManualClock()
        let harness = try ProxyHarness(fetcher: fetcher, clock: clock)
        try await withServer(harness) { _ in
            _ = try await harness.get("/3/trending/tv/day")
            clock.advance(by: 600)
            let aged = try await harness.get("/3/trending/tv/day")
            #expect(aged.header("Age") == "600")
            #expect(aged.header("Cache-Control") == "public, max-age=1200")
            #expect(aged.header("Cache-Status") == "amodb-proxy; hit; ttl=1200")
            #expect(fetcher.calls.count == 1)
        }
    }

    @Test func sharesOneEntryWhateverTheParameterOrderCaseOrExtras() async throws {
        let fetcher = ScriptedUpstream(fallback: .status(200, ScriptedUpstream.movieDetails))
        let harness = try ProxyHarness(fetcher: fetcher)
        try await withServer(harness) { _ async throws in
            for target in [
                "/3/movie/550?language=de-DE&append_to_response=ratings,credits",
                "/3/movie/550?append_to_response=credits,ratings&language=de-de",
                "/3/movie/550?api_key=someone-elses&append_to_response=credits,ratings,credits&language=DE-de&utm=1",
            ] {
                #expect(try await harness.get(target).status == 200)
            }
            #expect(fetcher.calls == ["/movie/550?append_to_response=credits,ratings&language=de-DE"])
        }
    }

    @Test func namesAmodbDoesNotKnowAreDroppedAndNeverForwarded() async throws {
        let fetcher = ScriptedUpstream(fallback: .status(200, ScriptedUpstream.movieDetails))
        let harness = try ProxyHarness(fetcher: fetcher)
        try await withServer(harness) { _ async throws in
            for target in [
                "/3/movie/550?append_to_response=credits,account_states",
                "/3/movie/550?append_to_response=credits,CREDITS,%20credits%20,../../x,%E2%80%8Bcredits",
                "/3/movie/550?append_to_response=casts,credits,trailers,",
            ] {
                #expect(try await harness.get(target).status == 200, "\(target)")
            }
            for target in ["/3/movie/550?append_to_response=secrets", "/3/movie/550?append_to_response=", "/3/movie/550?append_to_response=,%20,"] {
                #expect(try await harness.get(target).status == 200, "\(target)")
            }
            #expect(fetcher.calls == ["/movie/550?append_to_response=credits", "/movie/550"])
        }
    }

    @Test func makesOneUpstreamCallForManyConcurrentRequests() async throws {
        let fetcher = ScriptedUpstream()
        fetcher.hold()   // the one call stays in flight until all fifty have asked
        let harness = try ProxyHarness(fetcher: fetcher)
        try await withServer(harness) { _ in
            let statuses = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                for _ in 0..<50 {
                    group.addTask {
                        let response = try await harness.get("/3/trending/all/day")
                        return (response.status, response.header("Cache-Status"))
                    }
                }
                #expect(await eventually { fetcher.heldCount == 1 && harness.proxy.statistics.value(.collapsed) == 49 })
                fetcher.release()
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.count == 50)
            #expect(statuses.allSatisfy { $0.0 == 200 })
            #expect(statuses.filter { $0.1 == "amodb-proxy; fwd=miss; fwd-status=200; stored; collapsed" }.count == 49)
            #expect(statuses.filter { $0.1 == "amodb-proxy; fwd=miss; fwd-status=200; stored" }.count == 1)
            #expect(fetcher.calls.count == 1)
        }
    }

    @Test func neverSendsUnknownRoutesOrInvalidParametersUpstream() async throws {
        let fetcher = ScriptedUpstream()
        let harness = try ProxyHarness(fetcher: fetcher)
        try await withServer(harness) { _ in
            for target in ["/3/movie/popular", "/3/search/movie?query=x", "/movie/550", "/3/trending/movie/month", "/3/movie/0", "/3/movie/550/credits", "/"] {
                let response = try await harness.get(target)
                #expect(response.status == 404, "\(target)")
                #expect(response.text.contains("status_message"))
            }
            for target in ["/3/trending/movie/week?page=0", "/3/trending/movie/week?page=501", "/3/trending/movie/week?page=abc",
                           "/3/movie/550?language=not_a_tag", "/3/movie/550?append_to_response=credits&append_to_response=images",
                           "/3/movie/550?language=en&language=de"] {
                let response = try await harness.get(target)
                #expect(response.status == 400, "\(target)")
                #expect(response.text.contains("Invalid parameter"))
                #expect(response.header("Cache-Control") == "no-store")
            }
            #expect(fetcher.calls.isEmpty)
        }
    }

    @Test func refusesOtherMethodsWithAllow() async throws {
        let fetcher = ScriptedUpstream()
        let harness = try ProxyHarness(fetcher: fetcher)
        try await withServer(harness) { _ in
            let response = try await harness.get("/3/movie/550", method: "DELETE")
            #expect(response.status == 405)
            #expect(response.header("Allow") == "GET, HEAD")
            let head = try await harness.get("/3/trending/movie/week", method: "HEAD")
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
            #expect(Int(head.header("Content-Length") ?? "") == ScriptedUpstream.moviePage.utf8.count)
            #expect(fetcher.calls.count == 1)
        }
    }

    @Test func answersHealthz() async throws {
        let harness = try ProxyHarness(fetcher: ScriptedUpstream())
        try await withServer(harness) { _ in
            let response = try await harness.get("/healthz")
            #expect(response.status == 200)
            #expect(response.text == #"{"status":"ok"}"#)
        }
    }

    struct Mapping: Sendable, CustomTestStringConvertible {
        let name: String
        let answer: ScriptedUpstream.Answer
        let status: Int
        var testDescription: String { name }
    }

    static let mappings: [Mapping] = [
        Mapping(name: "401 key rejected → 502", answer: .status(401, ScriptedUpstream.keyRejected), status: 502),
        Mapping(name: "402 plan expired → 502", answer: .status(402, ScriptedUpstream.keyRejected), status: 502),
        Mapping(name: "500 → 502", answer: .status(500), status: 502),
        Mapping(name: "503 → 502", answer: .status(503), status: 502),
        Mapping(name: "504 → 504", answer: .status(504), status: 504),
        Mapping(name: "timeout → 504", answer: .failure(.timedOut), status: 504),
        Mapping(name: "unreachable → 502", answer: .failure(.unreachable), status: 502),
        Mapping(name: "truncated JSON → 502", answer: .status(200, String(ScriptedUpstream.moviePage.prefix(40))), status: 502),
        Mapping(name: "wrong shape → 502", answer: .status(200, #"{"hello":"world"}"#), status: 502),
        Mapping(name: "redirect → 502", answer: .status(302), status: 502),
        Mapping(name: "body holding the key → 502", answer: .status(200, ScriptedUpstream.moviePage.replacingOccurrences(of: "Fight Club", with: ProxyHarness.key)), status: 502),
    ]

    @Test(arguments: mappings)
    func mapsUpstreamFailuresAndStoresNothing(_ mapping: Mapping) async throws {
        let fetcher = ScriptedUpstream(fallback: mapping.answer)
        let harness = try ProxyHarness(fetcher: fetcher)
        try await withServer(harness) { _ in
            let response = try await harness.get("/3/trending/movie/week")
            #expect(response.status == mapping.status)
            let body = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
            #expect((body?["status_message"] as? String)?.isEmpty == false)
            #expect(response.header("Cache-Control") == "no-store")
            #expect(!response.text.contains(ProxyHarness.key))
            #expect(!response.headers.contains { $0.value.contains(ProxyHarness.key) })

            _ = try await harness.get("/3/trending/movie/week")
            #expect(fetcher.calls.count == 2, "a failure must not be stored")
            #expect(harness.proxy.cache.usage.entries == 0)
        }
    }

    @Test func retriesRateLimitedCallsAsAmodbAsks() async throws {
        let fetcher = ScriptedUpstream()
        fetcher.enqueue(.status(429, "", headers: ["retry-after": "0"]), .status(429, "", headers: ["retry-after": "0"]))
        let harness = try ProxyHarness(fetcher: fetcher)
        try await withServer(harness) { _ in
            let response = try await harness.get("/3/trending/movie/week")
            #expect(response.status == 200)
            #expect(fetcher.calls.count == 3)
        }
    }

    @Test func answers503WithRetryAfterWhenStillRateLimited() async throws {
        let fetcher = ScriptedUpstream(fallback: .status(429, "", headers: ["retry-after": "1"]))
        let harness = try ProxyHarness(fetcher: fetcher)
        try await withServer(harness) { _ in
            let response = try await harness.get("/3/trending/movie/week")
            #expect(response.status == 503)
            #expect(response.header("Retry-After") == "1")
            #expect(fetcher.calls.count == 3, "the first call and two retries")
        }
    }

    @Test func passesOnARetryAfterLongerThanTheCapWithoutWaiting() async throws {
        let fetcher = ScriptedUpstream(fallback: .status(429, "", headers: ["retry-after": "120"]))
        let harness = try ProxyHarness(fetcher: fetcher)
        try await withServer(harness) { _ in
            let response = try await harness.get("/3/trending/movie/week")
            #expect(response.status == 503)
            #expect(response.header("Retry-After") == "120")
            #expect(fetcher.calls.count == 1)
        }
    }

    @Test func answers304WhenTheClientHasTheSameBody() async throws {
        let harness = try ProxyHarness(fetcher: ScriptedUpstream())
        try await withServer(harness) { _ in
            let first = try await harness.get("/3/trending/movie/week")
            let etag = try #require(first.header("ETag"))
            let again = try await harness.get("/3/trending/movie/week", headers: ["If-None-Match": etag])
            #expect(again.status == 304)
            #expect(again.body.isEmpty)
            #expect(again.header("ETag") == etag)
            let other = try await harness.get("/3/trending/movie/week", headers: ["If-None-Match": "\"other\""])
            #expect(other.status == 200)
        }
    }
}

// MARK: The forwarder on its own

/// A forwarder over `fetcher`, as `ProxyServer` builds one, for tests that drive it directly.
func forwarder(
    _ fetcher: ScriptedUpstream, cache: any ResponseCache = MemoryResponseCache(), clock: ManualClock = ManualClock(),
    limit: Int = 40, adjust: (inout CachingForwarder.Policy) -> Void = { _ in }
) -> CachingForwarder {
    var policy = CachingForwarder.Policy(ProxyConfiguration())
    adjust(&policy)
    return CachingForwarder(
        cache: cache, fetcher: fetcher, budget: UpstreamBudget(limit: limit), clock: clock,
        logger: ProxyLogger(minimumLevel: .error, secrets: [], sink: { _ in }), policy: policy,
        validator: AnswerValidator(key: Secret(ProxyHarness.key)), statistics: CacheStatistics())
}

/// Asks `forwarder` as the responder does, from a Dispatch thread as an event loop would,
/// and waits for the answer, immediate or delivered.
func ask(
    _ forwarder: CachingForwarder, _ request: AmodbRequest, client: String? = nil, accept: AcceptEncoding = AcceptEncoding()
) async -> HTTPResponse {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async {
            let immediate = forwarder.respond(to: request, ifNoneMatch: nil, accept: accept, client: client) {
                { continuation.resume(returning: $0) }
            }
            if let immediate { continuation.resume(returning: immediate) }
        }
    }
}

/// A cache that, once armed, runs an action inside the next lookup that finds nothing,
/// after the lookup and before its caller sees the result: the moment between "not
/// cached" and "register a fetch" where a fetch could complete unseen.
private final class InterleavingCache: ResponseCache {
    let inner = MemoryResponseCache()
    private let state = Mutex<(action: (@Sendable () -> Bool)?, outcome: Bool?)>((nil, nil))

    /// Runs `action` inside the next lookup that finds nothing; what it returns is `outcome`.
    func arm(_ action: @escaping @Sendable () -> Bool) {
        state.withLock { $0.action = action }
    }

    /// What the armed action returned, once it has run.
    var outcome: Bool? { state.withLock { $0.outcome } }

    func entry(for key: String) -> CachedResponse? {
        let found = inner.entry(for: key)
        if found == nil, let action = state.withLock({ state in defer { state.action = nil }; return state.action }) {
            let outcome = action()
            state.withLock { $0.outcome = outcome }
        }
        return found
    }

    func store(_ entry: CachedResponse, for key: String) -> Bool { inner.store(entry, for: key) }
    func admits(byteCount: Int, for key: String) -> Bool { inner.admits(byteCount: byteCount, for: key) }
    var usage: (entries: Int, bytes: Int) { inner.usage }
    func allEntries() -> [(key: String, entry: CachedResponse)] { inner.allEntries() }
}

@Suite(.timeLimit(.minutes(1)))
struct CoalescingTests {
    @Test func aRequestArrivingJustAsAFetchCompletesUsesItsAnswerInsteadOfCallingAgain() async throws {
        let fetcher = ScriptedUpstream()
        let cache = InterleavingCache()
        let forwarder = forwarder(fetcher, cache: cache)
        let request = try AmodbRequest(route: .trending(.movie, .week))

        fetcher.hold()
        let first = Task { await ask(forwarder, request) }
        #expect(await eventually { fetcher.heldCount == 1 })
        // The second request finds nothing; before it can register, the first fetch completes.
        cache.arm {
            fetcher.release()
            return eventuallyBlocking { cache.inner.entry(for: request.pathAndQuery) != nil && forwarder.tableSizes.inFlight == 0 }
        }
        let second = await ask(forwarder, request)
        #expect(cache.outcome == true, "the first fetch completed between the second's lookup and its registration")
        #expect(await first.value.status == 200)
        #expect(second.status == 200)
        #expect(second.cacheOutcome == .hit(ttl: 1800))
        #expect(fetcher.calls.count == 1, "one upstream call, not a second one for the late request")
        await forwarder.drain(within: 1)
    }

    @Test func aRequestArrivingWhileAFetchIsInFlightJoinsIt() async throws {
        let fetcher = ScriptedUpstream()
        let forwarder = forwarder(fetcher)
        let request = try AmodbRequest(route: .movie(id: 550))
        fetcher.setFallback(.status(200, ScriptedUpstream.movieDetails))
        fetcher.hold()
        let first = Task { await ask(forwarder, request) }
        #expect(await eventually { fetcher.heldCount == 1 })
        let second = Task { await ask(forwarder, request) }
        #expect(await eventually { forwarder.statistics.value(.collapsed) == 1 })
        fetcher.release()
        #expect(await first.value.cacheOutcome == .miss(fwdStatus: 200, stored: true, collapsed: false, detail: nil))
        #expect(await second.value.cacheOutcome == .miss(fwdStatus: 200, stored: true, collapsed: true, detail: nil))
        #expect(fetcher.calls.count == 1)
        await forwarder.drain(within: 1)
    }

    @Test func pathsInFlightAreBoundedAndANewOneIsRefusedBeyondIt() async throws {
        let fetcher = ScriptedUpstream(fallback: .status(200, ScriptedUpstream.movieDetails))
        let forwarder = forwarder(fetcher) { $0.maxFetchesInFlight = 2 }
        fetcher.hold()
        let held = (1...2).map { id in Task { await ask(forwarder, try! AmodbRequest(route: .movie(id: id))) } }
        #expect(await eventually { fetcher.heldCount == 2 })
        // Refused at once, not held: the answer is immediate.
        let refused = forwarder.respond(to: try AmodbRequest(route: .movie(id: 3)), ifNoneMatch: nil, client: nil) { { _ in } }
        #expect(refused?.status == 503)
        #expect(refused?.headers["Retry-After"] == "1")
        #expect(refused?.cacheOutcome == .miss(fwdStatus: nil, stored: false, collapsed: false, detail: .tooManyFetches))
        #expect(forwarder.tableSizes.inFlight == 2)
        fetcher.release()
        for task in held { _ = await task.value }
        #expect(forwarder.tableSizes.inFlight == 0)
        await forwarder.drain(within: 1)
    }
}

@Suite(.timeLimit(.minutes(1)))
struct KeyProbeTests {
    @Test func readinessComesBackWhenAProbeFindsTheKeyAcceptedAgain() async throws {
        let fetcher = ScriptedUpstream(fallback: .status(401, ScriptedUpstream.keyRejected))
        let forwarder = forwarder(fetcher) { $0.keyProbeInterval = 0.001...0.002 }
        let refused = await ask(forwarder, try AmodbRequest(route: .movie(id: 550)))
        #expect(refused.status == 502)
        #expect(forwarder.keyRejected)
        #expect(await eventually { fetcher.calls.count >= 3 }, "probes go on while the key is refused")
        #expect(forwarder.keyRejected)

        fetcher.setFallback(.status(200, ScriptedUpstream.moviePage))
        #expect(await eventually { !forwarder.keyRejected }, "no client request is needed")
        #expect(fetcher.calls.dropFirst().allSatisfy { $0 == "/trending/all/day" }, "one cheap call per probe")
        #expect(forwarder.statistics.value(.keyProbe) == fetcher.calls.count - 1)
        #expect(await eventually { forwarder.tableSizes.tasks == 0 }, "probing stops once the key is accepted")
        await forwarder.drain(within: 1)
    }

    @Test func probesSpendOnlyWhatTheBudgetGrants() async throws {
        let fetcher = ScriptedUpstream(fallback: .status(401, ScriptedUpstream.keyRejected))
        let forwarder = forwarder(fetcher, limit: 4) { $0.keyProbeInterval = 0.001...0.002 }
        _ = await ask(forwarder, try AmodbRequest(route: .movie(id: 550)))
        // The clock stands still: probes take calls only from slack (while the window is at
        // most half spent), so one probe follows the miss, then the budget refuses them.
        #expect(await eventually { forwarder.statistics.value(.budgetDenial) >= 3 })
        #expect(fetcher.calls.count == 2)
        #expect(forwarder.keyRejected)
        await forwarder.drain(within: 1)
    }

    @Test func noProbeRunsWhileTheKeyIsAccepted() async throws {
        let fetcher = ScriptedUpstream()
        let forwarder = forwarder(fetcher) { $0.keyProbeInterval = 0.001...0.002 }
        #expect(await ask(forwarder, try AmodbRequest(route: .trending(.tv, .day))).status == 200)
        #expect(await eventually { forwarder.tableSizes.tasks == 0 })
        #expect(forwarder.statistics.value(.keyProbe) == 0)
        #expect(!forwarder.keyRejected)
    }

    @Test func shutdownEndsTheProbe() async throws {
        let fetcher = ScriptedUpstream(fallback: .status(402, ScriptedUpstream.keyRejected))
        let forwarder = forwarder(fetcher)   // probes 30–60 s apart: the probe is asleep
        _ = await ask(forwarder, try AmodbRequest(route: .movie(id: 550)))
        #expect(await eventually { forwarder.tableSizes.tasks == 1 })
        forwarder.stopBackgroundWork()
        #expect(await eventually { forwarder.tableSizes.tasks == 0 })
        #expect(fetcher.calls.count == 1)
    }
}

// MARK: Through the proxy

private func temporarySnapshotPath() -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("amodb-forwarder-\(UUID().uuidString).json").path
}

@Suite(.timeLimit(.minutes(1)))
struct ForwarderShutdownTests {
    @Test func shutdownWakesARetryWaitingOutA429AndAnswersAtOnce() async throws {
        let fetcher = ScriptedUpstream(fallback: .status(429, "", headers: ["retry-after": "30"]))
        // A grace far shorter than the 30 s wait, yet long enough for a busy machine to answer.
        let harness = try ProxyHarness(configuration: ProxyHarness.configuration { $0.shutdownGraceSeconds = 5 }, fetcher: fetcher)
        try await withServer(harness) { _ async throws in
            let pending = Task { try await harness.get("/3/trending/movie/week") }
            #expect(await eventually { fetcher.calls.count == 1 })
            await harness.shutdown()
            let response = try await pending.value
            #expect(response.status == 503, "the waiting client gets the 429's answer, not a dropped connection")
            #expect(response.header("Retry-After") == "30")
            #expect(fetcher.calls.count == 1, "no retry once shutdown has begun")
        }
    }

    @Test func aRefreshStillInFlightAfterTheGraceIsNeverStored() async throws {
        let path = temporarySnapshotPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let fetcher = ScriptedUpstream()
        let clock = ManualClock()
        let settings = ProxyHarness.configuration { $0.snapshotPath = path; $0.shutdownGraceSeconds = 0.2 }
        let harness = try ProxyHarness(configuration: settings, fetcher: fetcher, clock: clock)
        let storedAt = clock.now()
        try await withServer(harness) { _ async throws in
            _ = try await harness.get("/3/trending/movie/week")
            clock.advance(by: 1801)
            fetcher.hold()
            #expect(try await harness.get("/3/trending/movie/week").header("Cache-Status") == "amodb-proxy; fwd=stale; ttl=-1")
            #expect(await eventually { fetcher.heldCount == 1 })
            await harness.shutdown()   // the grace ends with the refresh still held
            fetcher.release()
            #expect(await eventually { harness.proxy.forwarderTasks == 0 }, "the refresh has ended")
            #expect(harness.proxy.cache.entry(for: "/trending/movie/week")?.storedAt == storedAt, "nothing stored after the snapshot")
        }
        let reloaded = try ProxyHarness(configuration: settings, fetcher: ScriptedUpstream(), clock: clock)
        try await withServer(reloaded) { _ async throws in
            #expect(reloaded.proxy.cache.entry(for: "/trending/movie/week")?.storedAt == storedAt)
        }
    }

    @Test func aRefreshEndingWithinTheGraceIsInTheFinalSnapshot() async throws {
        let path = temporarySnapshotPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let fetcher = ScriptedUpstream()
        let clock = ManualClock()
        let settings = ProxyHarness.configuration { $0.snapshotPath = path; $0.shutdownGraceSeconds = 10 }
        let harness = try ProxyHarness(configuration: settings, fetcher: fetcher, clock: clock)
        try await withServer(harness) { _ async throws in
            _ = try await harness.get("/3/trending/movie/week")
            clock.advance(by: 1801)
            fetcher.hold()
            _ = try await harness.get("/3/trending/movie/week")
            #expect(await eventually { fetcher.heldCount == 1 })
            let shutdown = Task { await harness.shutdown() }
            // Shutdown has begun once the listener is closed.
            #expect(await eventually { (try? RawHTTPConnection(port: harness.port, timeout: 1)) == nil })
            fetcher.release()
            await shutdown.value
        }
        let reloaded = try ProxyHarness(configuration: settings, fetcher: ScriptedUpstream(), clock: clock)
        try await withServer(reloaded) { _ async throws in
            #expect(reloaded.proxy.cache.entry(for: "/trending/movie/week")?.storedAt == clock.now(), "the refreshed copy")
        }
    }
}

@Suite(.timeLimit(.minutes(1)))
struct ClientShareTests {
    /// Clients told apart by a trusted `X-Forwarded-For`, none exempt, 40 calls a minute.
    private static func settings(share: Double = 0.125) -> ProxyConfiguration {
        ProxyHarness.configuration {
            $0.rateLimit = 40
            $0.rateLimitExempt = []
            $0.trustedProxies = ["127.0.0.1"]
            $0.clientUpstreamShare = share
        }
    }

    @Test func aClientBeyondItsShareGets503WhileOthersMissesGoThrough() async throws {
        let fetcher = ScriptedUpstream(fallback: .status(404, #"{"status_code":34,"status_message":"nope"}"#))
        let clock = ManualClock()
        let harness = try ProxyHarness(configuration: Self.settings(), fetcher: fetcher, clock: clock)
        try await withServer(harness) { _ async throws in
            let greedy = ["X-Forwarded-For": "203.0.113.7"]
            for id in 1...5 { #expect(try await harness.get("/3/movie/\(900_000 + id)", headers: greedy).status == 404) }
            let refused = try await harness.get("/3/movie/900006", headers: greedy)
            #expect(refused.status == 503)
            #expect(refused.header("Retry-After") == "60")
            #expect(refused.header("Cache-Status") == "amodb-proxy; fwd=miss; detail=client-share-spent")
            #expect(refused.text.contains("share"))
            #expect(fetcher.calls.count == 5, "an eighth of 40")

            let other = try await harness.get("/3/movie/550", headers: ["X-Forwarded-For": "198.51.100.2"])
            #expect(other.status == 404)
            #expect(fetcher.calls.count == 6)
            // What is stored costs no share: the greedy client still gets the remembered 404s.
            #expect(try await harness.get("/3/movie/900001", headers: greedy).status == 404)
            #expect(try await harness.get("/3/movie/550", headers: greedy).status == 404)

            clock.advance(by: 61)
            #expect(try await harness.get("/3/movie/900007", headers: greedy).status == 404, "a new window, a new share")
        }
    }

    @Test func missesTheBudgetRefusesCostTheClientNoShare() async throws {
        let fetcher = ScriptedUpstream(fallback: .status(404, "{}"))
        let clock = ManualClock()
        var settings = Self.settings(share: 0.5)
        settings.rateLimit = 6   // 6 calls for misses a window, 3 per client
        let harness = try ProxyHarness(configuration: settings, fetcher: fetcher, clock: clock)
        try await withServer(harness) { _ async throws in
            func get(_ id: Int, as client: String) async throws -> RawHTTPResponse {
                try await harness.get("/3/movie/\(id)", headers: ["X-Forwarded-For": client])
            }
            for id in 1...3 { #expect(try await get(id, as: "198.51.100.2").status == 404) }
            for id in 4...6 { #expect(try await get(id, as: "198.51.100.3").status == 404) }
            clock.advance(by: 30)
            for id in 7...9 {
                let refused = try await get(id, as: "203.0.113.7")
                #expect(refused.header("Cache-Status") == "amodb-proxy; fwd=miss; detail=budget-exhausted")
            }
            clock.advance(by: 31)   // the window's calls have left it; the refused misses were never made
            for id in 10...12 { #expect(try await get(id, as: "203.0.113.7").status == 404, "movie \(id)") }
            #expect(fetcher.calls.count == 9)
        }
    }

    @Test func exemptAddressesAndAShareOfOneAreNotLimited() async throws {
        for (exempt, share) in [(true, 0.125), (false, 1.0)] {
            let fetcher = ScriptedUpstream(fallback: .status(404, "{}"))
            var settings = Self.settings(share: share)
            if exempt { settings.rateLimitExempt = ["127.0.0.1"]; settings.trustedProxies = [] }
            let harness = try ProxyHarness(configuration: settings, fetcher: fetcher)
            try await withServer(harness) { _ async throws in
                for id in 1...8 { #expect(try await harness.get("/3/movie/\(id)").status == 404) }
                #expect(fetcher.calls.count == 8)
            }
        }
    }

    @Test(arguments: [("0.25", 0.25), ("1", 1.0), (" 0.5 ", 0.5)])
    func theShareIsASetting(value: String, share: Double) throws {
        let environment = ["AMODB_KEY": "k", "AMODB_CONFIG": "/dev/null", "AMODB_CLIENT_SHARE": value]
        guard case .serve(let loaded) = try ConfigurationLoader.load(arguments: [], environment: environment) else {
            Issue.record("not a serve command")
            return
        }
        #expect(loaded.clientUpstreamShare == share)
        guard case .serve(let flagged) = try ConfigurationLoader.load(arguments: ["--client-share", value], environment: ["AMODB_KEY": "k", "AMODB_CONFIG": "/dev/null"]) else {
            Issue.record("not a serve command")
            return
        }
        #expect(flagged.clientUpstreamShare == share)
    }

    @Test(arguments: ["0", "-0.1", "1.5", "inf", "nan", "1e300", "an eighth"])
    func aShareOutsideZeroToOneIsRefusedNamingTheSetting(value: String) {
        let environment = ["AMODB_KEY": "k", "AMODB_CONFIG": "/dev/null", "AMODB_CLIENT_SHARE": value]
        #expect { _ = try ConfigurationLoader.load(arguments: [], environment: environment) } throws: { error in
            "\(error)".contains("AMODB_CLIENT_SHARE")
        }
    }

    @Test func theBudgetTakesAMissCallAndItsClientsShareInOneStep() {
        let budget = UpstreamBudget(limit: 4, shares: ClientUpstreamShare(callsPerWindow: 2))
        #expect(budget.acquire(.miss, client: "a", now: 0) == .granted)
        #expect(budget.acquire(.miss, client: "a", now: 1) == .granted)
        #expect(budget.acquire(.miss, client: "a", now: 2) == .shareSpent(retryAfter: 58))
        #expect(budget.used(now: 2) == 2, "a miss its share refused took no call")
        #expect(budget.acquire(.miss, client: "b", now: 3) == .granted)
        #expect(budget.acquire(.miss, client: nil, now: 3) == .granted)
        #expect(budget.acquire(.miss, client: "c", now: 4) == .denied(retryAfter: 56))
        #expect(budget.shareWait(for: "c", now: 4) == nil, "a call the window refused is not charged")
        #expect(budget.shareWait(for: "a", now: 4) == 56)
        #expect(budget.acquire(.miss, client: "c", now: 60) == .granted)
        #expect(budget.acquire(.refresh, client: "a", now: 64) == .granted, "a refresh is no client's")
    }

    /// A budget that holds every call until `open()`, to catch a fetch between its lease and its call.
    private final class GatedBudget: CallBudget {
        let inner: UpstreamBudget
        private let state = Mutex<(open: Bool, held: [CheckedContinuation<Void, Never>])>((false, []))

        init(_ inner: UpstreamBudget) {
            self.inner = inner
        }

        var held: Int { state.withLock { $0.held.count } }

        func open() {
            let held = state.withLock { state in
                state.open = true
                defer { state.held = [] }
                return state.held
            }
            for continuation in held { continuation.resume() }
        }

        var limit: Int { inner.limit }
        func acquire(_ priority: CallPriority, client: String?, now: Double) async -> CallDecision {
            await withCheckedContinuation { continuation in
                let go = state.withLock { state in
                    if !state.open { state.held.append(continuation) }
                    return state.open
                }
                if go { continuation.resume() }
            }
            return inner.acquire(priority, client: client, now: now)
        }
        func shareWait(for client: String, now: Double) async -> Double? { inner.shareWait(for: client, now: now) }
        func observe(headers: [String: String], now: Double) async -> [String] { inner.observe(headers: headers, now: now) }
        func exhaust(for seconds: Double, now: Double) async { inner.exhaust(for: seconds, now: now) }
        func used(now: Double) -> Int { inner.used(now: now) }
        var trackedClients: Int { inner.trackedClients }
    }

    @Test func aRequestThatJoinedAMissRefusedByItsLeadersShareAsksAgainAsItself() async throws {
        let fetcher = ScriptedUpstream(fallback: .status(200, ScriptedUpstream.movieDetails))
        let clock = ManualClock()
        let inner = UpstreamBudget(limit: 40, shares: ClientUpstreamShare(callsPerWindow: 1))
        #expect(inner.acquire(.miss, client: "greedy", now: clock.now()) == .granted)   // its one call of the window
        let budget = GatedBudget(inner)
        let statistics = CacheStatistics()
        let forwarder = CachingForwarder(
            cache: MemoryResponseCache(), fetcher: fetcher, budget: budget, clock: clock,
            logger: ProxyLogger(minimumLevel: .error, secrets: [], sink: { _ in }), policy: CachingForwarder.Policy(ProxyConfiguration()),
            validator: AnswerValidator(key: Secret(ProxyHarness.key)), statistics: statistics)
        let request = try AmodbRequest(route: .movie(id: 550))
        let greedy = Task { await ask(forwarder, request, client: "greedy") }
        #expect(await eventually { budget.held == 1 }, "the greedy client leads, and waits for its call")
        let polite = Task { await ask(forwarder, request, client: "polite") }
        #expect(await eventually { statistics.value(.collapsed) == 1 }, "the polite one joins it")
        budget.open()
        let refused = await greedy.value
        #expect(refused.status == 503)
        #expect(refused.cacheOutcome == .miss(fwdStatus: nil, stored: false, collapsed: false, detail: .clientShareSpent))
        let answered = await polite.value
        #expect(answered.status == 200, "the share spent was the leader's, not its own")
        #expect(fetcher.calls == ["/movie/550"])
        #expect(statistics.value(.miss) == 2, "asking again is not another miss")
    }

    @Test func theTableOfClientsIsBounded() {
        let shares = ClientUpstreamShare(callsPerWindow: 5, capacity: 100)
        for client in 0..<10_000 { _ = shares.take("address:10.0.\(client / 256).\(client % 256)", now: 1000) { .granted } }
        #expect(shares.count <= 100)
        for client in 0..<10_000 { _ = shares.take("token:\(client)", now: 2000) { .granted } }
        #expect(shares.count <= 100, "a later window sweeps the idle ones")
    }
}

@Suite(.timeLimit(.minutes(1)))
struct UpstreamNumbersTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let headers: [String: String]
        /// The next miss: its status and `Retry-After`.
        let status: Int
        let retryAfter: String?
        var testDescription: String { headers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") }
    }

    static let cases: [Case] = [
        Case(headers: ["x-ratelimit-remaining": "inf"], status: 200, retryAfter: nil),
        Case(headers: ["x-ratelimit-remaining": "nan"], status: 200, retryAfter: nil),
        Case(headers: ["x-ratelimit-remaining": "1e19"], status: 200, retryAfter: nil),
        Case(headers: ["x-ratelimit-remaining": "99999999999999999999"], status: 200, retryAfter: nil),
        Case(headers: ["x-ratelimit-limit": "1e300"], status: 200, retryAfter: nil),
        Case(headers: ["x-ratelimit-limit": "-inf", "ratelimit-limit": "2"], status: 200, retryAfter: nil),
        Case(headers: ["ratelimit-limit": "1e300", "ratelimit-remaining": "-1"], status: 200, retryAfter: nil),
        Case(headers: ["x-ratelimit-remaining": "0", "x-ratelimit-reset": "1e300"], status: 503, retryAfter: "60"),
        Case(headers: ["x-ratelimit-remaining": "0", "x-ratelimit-reset": "inf"], status: 503, retryAfter: "60"),
        Case(headers: ["x-ratelimit-remaining": "0", "x-ratelimit-reset": "5"], status: 503, retryAfter: "5"),
        Case(headers: ["x-ratelimit-remaining": "0", "x-ratelimit-reset": "1800000005"], status: 503, retryAfter: "5"),
        Case(headers: ["x-ratelimit-remaining": "0", "x-ratelimit-reset": "1800000005000"], status: 503, retryAfter: "5"),
        Case(headers: ["ratelimit-remaining": "0", "ratelimit-reset": "1800000004000.5"], status: 503, retryAfter: "5"),
        Case(headers: ["x-ratelimit-remaining": "0", "x-ratelimit-reset": "172800"], status: 503, retryAfter: "60"),
    ]

    @Test(arguments: cases)
    func numbersInRateLimitFieldsNeverCrashAndAreReadByTheirSize(_ testCase: Case) async throws {
        let fetcher = ScriptedUpstream(fallback: .status(200, ScriptedUpstream.movieDetails, headers: testCase.headers))
        let harness = try ProxyHarness(fetcher: fetcher, clock: ManualClock())
        try await withServer(harness) { _ async throws in
            #expect(try await harness.get("/3/movie/1").status == 200)
            let next = try await harness.get("/3/movie/2")
            #expect(next.status == testCase.status)
            #expect(next.header("Retry-After") == testCase.retryAfter)
        }
    }

    @Test(arguments: ["1e300", "inf", "-inf", "nan", "99999999999999999999", "-5", "1.5"])
    func anUnreadableRetryAfterOnA429NeverCrashes(_ value: String) async throws {
        let fetcher = ScriptedUpstream(fallback: .status(429, "", headers: ["retry-after": value]))
        let harness = try ProxyHarness(configuration: ProxyHarness.configuration { $0.retryAfterCap = 0 }, fetcher: fetcher, clock: ManualClock())
        try await withServer(harness) { _ async throws in
            let response = try await harness.get("/3/trending/movie/week")
            #expect(response.status == 503)
            // A number too large is a day; anything unreadable is read as amodb's default of a second.
            #expect(response.header("Retry-After") == (value == "99999999999999999999" ? "86400" : "1"))
        }
    }

    @Test func aRetryAfterGivenAsAnHTTPDateIsRead() async throws {
        let clock = ManualClock()
        let date = Date(timeIntervalSince1970: clock.now() + 45)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let fetcher = ScriptedUpstream(fallback: .status(429, "", headers: ["retry-after": formatter.string(from: date)]))
        let harness = try ProxyHarness(fetcher: fetcher, clock: clock)
        try await withServer(harness) { _ async throws in
            let response = try await harness.get("/3/trending/movie/week")
            #expect(response.status == 503)
            #expect(response.header("Retry-After") == "45")
            #expect(fetcher.calls.count == 1, "45 s is past the cap of 30: passed on, not waited out")
            let next = try await harness.get("/3/trending/movie/day")
            #expect(next.header("Retry-After") == "45", "the window is spent until then")
        }
    }
}

@Suite(.timeLimit(.minutes(1)))
struct BoundedStateTests {
    @Test(arguments: [(8, 404), (100_000, 404), (100_000, 500)])
    func manyDistinctFailingPathsLeaveNoTableGrowing(limit: Int, status: Int) async throws {
        let fetcher = ScriptedUpstream(fallback: .status(status, #"{"status_code":34,"status_message":"nope"}"#))
        let maxBytes = 64 * 1024
        let cache = MemoryResponseCache(maxBytes: maxBytes)
        let forwarder = forwarder(fetcher, cache: cache, limit: limit)
        for id in 1...5_000 { _ = await ask(forwarder, try AmodbRequest(route: .movie(id: 1_000_000 + id))) }
        #expect(await eventually { forwarder.tableSizes.tasks == 0 })
        let sizes = forwarder.tableSizes
        #expect(sizes.inFlight == 0)
        #expect(sizes.backoff == 0, "a miss has nothing to back off from")
        #expect(cache.usage.bytes <= maxBytes, "remembered 404s are held to the byte budget")
        #expect(cache.usage.entries * MemoryResponseCache.entryOverhead <= maxBytes)
        if limit == 8 { #expect(fetcher.calls.count == 8, "misses refused by the budget make no call and leave nothing") }
    }

    @Test func theBackoffTableIsBoundedWhateverFails() {
        let backoff = RefreshBackoff(capacity: 100)
        for index in 0..<10_000 { backoff.record(.init(until: 2000 + Double(index), fwdStatus: 500), for: "/movie/\(index)", now: 1000) }
        #expect(backoff.count == 100)
        #expect(backoff.failure(for: "/movie/9999", now: 1000) != nil, "the newest failures are kept")
        #expect(backoff.failure(for: "/movie/0", now: 1000) == nil, "the soonest-ending made room")
        backoff.record(.init(until: 5000, fwdStatus: nil), for: "/movie/new", now: 100_000)
        #expect(backoff.count == 1, "ended back-offs are swept")
    }
}
