import AmodbModels
import AmodbTestSupport
import Foundation
import Synchronization
import Testing

@testable import AmodbProxy

@Suite(.timeLimit(.minutes(1)))
struct CallerShareTests {
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
            for id in 1...5 {
                #expect(try await harness.get("/3/movie/\(900_000 + id)", headers: greedy).status == 404)
            }
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
            #expect(
                try await harness.get("/3/movie/900007", headers: greedy).status == 404, "a new window, a new share")
        }
    }

    @Test func missesTheBudgetRefusesCostTheClientNoShare() async throws {
        let fetcher = ScriptedUpstream(fallback: .status(404, "{}"))
        let clock = ManualClock()
        var settings = Self.settings(share: 0.5)
        settings.rateLimit = 6  // 6 calls for misses a window, 3 per client
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
            clock.advance(by: 31)  // the window's calls have left it; the refused misses were never made
            for id in 10...12 { #expect(try await get(id, as: "203.0.113.7").status == 404, "movie \(id)") }
            #expect(fetcher.calls.count == 9)
        }
    }

    @Test func exemptAddressesAndAShareOfOneAreNotLimited() async throws {
        for (exempt, share) in [(true, 0.125), (false, 1.0)] {
            let fetcher = ScriptedUpstream(fallback: .status(404, "{}"))
            var settings = Self.settings(share: share)
            if exempt {
                settings.rateLimitExempt = ["127.0.0.1"]
                settings.trustedProxies = []
            }
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
        guard
            case .serve(let flagged) = try ConfigurationLoader.load(
                arguments: ["--client-share", value], environment: ["AMODB_KEY": "k", "AMODB_CONFIG": "/dev/null"])
        else {
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
        let budget = UpstreamBudget(limit: 4, shares: CallerShare(callsPerWindow: 2))
        #expect(budget.acquire(.miss, client: "a", now: 0) == .granted)
        #expect(budget.acquire(.miss, client: "a", now: 1) == .granted)
        #expect(budget.acquire(.miss, client: "a", now: 2) == .shareSpent(retryAfter: 58))
        #expect(budget.used(now: 2) == 2, "a miss its share refused took no call")
        #expect(budget.acquire(.miss, client: "b", now: 3) == .granted)
        #expect(budget.acquire(.miss, client: nil, now: 3) == .granted)
        #expect(budget.acquire(.miss, client: "c", now: 4) == .denied(retryAfter: 56))
        #expect(
            budget.shareStanding(for: "c", now: 4) == ShareStanding(left: 2, wait: nil),
            "a call the window refused is not charged")
        #expect(budget.shareStanding(for: "a", now: 4) == ShareStanding(left: 0, wait: 56))
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
        func shareStanding(for client: String, now: Double) async -> ShareStanding? {
            inner.shareStanding(for: client, now: now)
        }
        func observe(headers: [String: String], now: Double) async -> [String] {
            inner.observe(headers: headers, now: now)
        }
        func exhaust(for seconds: Double, now: Double) async { inner.exhaust(for: seconds, now: now) }
        func reopen(now: Double) async { inner.reopen(now: now) }
        func completed(grantedAt: Double, now: Double, answered: Bool) async {
            inner.completed(grantedAt: grantedAt, now: now, answered: answered)
        }
        func used(now: Double) -> Int { inner.used(now: now) }
        var trackedClients: Int { inner.trackedClients }
    }

    @Test func aRequestThatJoinedAMissRefusedByItsLeadersShareAsksAgainAsItself() async throws {
        let fetcher = ScriptedUpstream(fallback: .status(200, ScriptedUpstream.movieDetails))
        let clock = ManualClock()
        let inner = UpstreamBudget(limit: 40, shares: CallerShare(callsPerWindow: 1))
        #expect(inner.acquire(.miss, client: "greedy", now: clock.now()) == .granted)  // its one call of the window
        let budget = GatedBudget(inner)
        let statistics = CacheStatistics()
        let forwarder = cacheDriver(
            fetcher: fetcher, window: budget, clock: clock, policy: CacheStages.Policy(ProxyConfiguration()),
            statistics: statistics)
        let request = try AmodbRequest(route: .movie(id: 550))
        let greedy = Task { await ask(forwarder, request, client: "greedy") }
        #expect(await eventually { budget.held == 1 }, "the greedy client leads, and waits for its call")
        let polite = Task { await ask(forwarder, request, client: "polite") }
        #expect(await eventually { statistics.value(.collapsed) == 1 }, "the polite one joins it")
        budget.open()
        let refused = await greedy.value
        #expect(refused.status == 503)
        #expect(
            refused.cacheOutcome == .miss(fwdStatus: nil, stored: false, collapsed: false, detail: .clientShareSpent))
        let answered = await polite.value
        #expect(answered.status == 200, "the share spent was the leader's, not its own")
        #expect(fetcher.calls == ["/movie/550"])
        #expect(statistics.value(.miss) == 2, "asking again is not another miss")
    }

    @Test func theTableOfClientsIsBounded() {
        let shares = CallerShare(callsPerWindow: 5, capacity: 100)
        for client in 0..<10_000 {
            _ = shares.take("address:10.0.\(client / 256).\(client % 256)", now: 1000) { .granted }
        }
        #expect(shares.count <= 100)
        for client in 0..<10_000 { _ = shares.take("token:\(client)", now: 2000) { .granted } }
        #expect(shares.count <= 100, "a later window sweeps the idle ones")
    }
}
