import AmodbHTTP
import AmodbModels
@testable import AmodbProxy
import AmodbTestSupport
import Synchronization
import Testing

/// Misses waiting for a call once the window is spent (`MissQueue`), on a simulated clock:
/// each wait ends exactly when the clock passes it, so nothing here waits in real time.
@Suite(.timeLimit(.minutes(1)))
struct MissQueueTests {
    /// A forwarder of `limit` calls a minute whose misses wait `wait` seconds, on `clock`.
    private static func forwarder(
        _ fetcher: any UpstreamFetcher, clock: SimulatedClock, limit: Int = 2, wait: Double = 2, waiting: Int = 256,
        share: Int? = nil, statistics: CacheStatistics = CacheStatistics()
    ) -> CachingForwarder {
        var configuration = ProxyConfiguration()
        configuration.missWait = wait
        configuration.movieTTL = 10
        configuration.clientUpstreamShare = 1
        var policy = CachingForwarder.Policy(configuration)
        policy.maxWaitingMisses = waiting
        return CachingForwarder(
            cache: MemoryResponseCache(), fetcher: fetcher,
            budget: UpstreamBudget(limit: limit, shares: share.map { ClientUpstreamShare(callsPerWindow: $0) }), clock: clock,
            logger: ProxyLogger(minimumLevel: .error, secrets: [], sink: { _ in }), policy: policy,
            validator: AnswerValidator(key: Secret(ProxyHarness.key)), statistics: statistics)
    }

    /// Answers in the order they were given, each with the movie it answers.
    private final class Answers: Sendable {
        private let list = Mutex<[(id: Int, status: Int)]>([])
        var all: [(id: Int, status: Int)] { list.withLock { $0 } }
        func add(_ id: Int, _ response: HTTPResponse) { list.withLock { $0.append((id, response.status)) } }
    }

    /// Asks for movie `id` at the clock's time; its answer lands in `answers` when given.
    private static func ask(_ forwarder: CachingForwarder, _ id: Int, as client: String? = nil, into answers: Answers) async throws {
        let request = try AmodbRequest(route: .movie(id: id))
        if let now = forwarder.respond(to: request, ifNoneMatch: nil, client: client, later: { { answers.add(id, $0) } }) {
            answers.add(id, now)
        }
        await forwarder.settled()
    }

    /// Movies 1 and 2 fetched at 1000 and 1001: the window of 2 is spent until 1060, then 1061.
    private static func spendTheWindow(_ forwarder: CachingForwarder, _ clock: SimulatedClock, _ answers: Answers) async throws {
        try await ask(forwarder, 1, into: answers)
        await clock.advance(to: 1001) { await forwarder.settled() }
        try await ask(forwarder, 2, into: answers)
    }

    /// amodb answering every movie at once, counting its calls.
    private final class Movies: UpstreamFetcher {
        private let made = Mutex<[String]>([])
        var calls: [String] { made.withLock { $0 } }

        func fetch(_ request: AmodbRequest) async -> Result<UpstreamResponse, UpstreamError> {
            made.withLock { $0.append(request.pathAndQuery) }
            guard case .movie(let id) = request.route else { return .success(UpstreamResponse(status: 404)) }
            return .success(UpstreamResponse(status: 200, body: Array(#"{"id":\#(id),"title":"t"}"#.utf8)))
        }
    }

    private static func moviesFetcher() -> Movies { Movies() }

    @Test func aMissWaitsForTheCallThatFreesWithinItsWaitAndIsServed() async throws {
        let clock = SimulatedClock(1000)
        let fetcher = Self.moviesFetcher()
        let forwarder = Self.forwarder(fetcher, clock: clock)
        let answers = Answers()
        try await Self.spendTheWindow(forwarder, clock, answers)
        await clock.advance(to: 1059.5) { await forwarder.settled() }
        try await Self.ask(forwarder, 3, into: answers)   // the window is spent; a call frees at 1060
        #expect(answers.all.count == 2, "it waits")
        #expect(forwarder.tableSizes.tasks == 1)
        await clock.advance(to: 1060.2) { await forwarder.settled() }
        #expect(answers.all.map(\.status) == [200, 200, 200])
        #expect(fetcher.calls.count == 3)
        await forwarder.drain(within: 1)
    }

    @Test func withoutAWaitTheSameMissIsRefusedAtOnce() async throws {
        let clock = SimulatedClock(1000)
        let fetcher = Self.moviesFetcher()
        let forwarder = Self.forwarder(fetcher, clock: clock, wait: 0)
        let answers = Answers()
        try await Self.spendTheWindow(forwarder, clock, answers)
        await clock.advance(to: 1059.5) { await forwarder.settled() }
        try await Self.ask(forwarder, 3, into: answers)
        #expect(answers.all.map(\.status) == [200, 200, 503])
        #expect(fetcher.calls.count == 2)
        await forwarder.drain(within: 1)
    }

    @Test func aMissWhoseCallFreesAfterItsWaitIsRefusedWithoutWaiting() async throws {
        let clock = SimulatedClock(1000)
        let fetcher = Self.moviesFetcher()
        let forwarder = Self.forwarder(fetcher, clock: clock)
        let answers = Answers()
        try await Self.ask(forwarder, 1, into: answers)
        try await Self.ask(forwarder, 2, into: answers)
        await clock.advance(to: 1030) { await forwarder.settled() }
        try await Self.ask(forwarder, 3, into: answers)   // the next call frees in 30 s
        #expect(answers.all.map(\.status) == [200, 200, 503], "answered with no time passing")
        await forwarder.drain(within: 1)
    }

    @Test func waitingMissesAreServedInTurnAndLateComersDoNotOvertake() async throws {
        let clock = SimulatedClock(1000)
        let fetcher = Self.moviesFetcher()
        let forwarder = Self.forwarder(fetcher, clock: clock)
        let answers = Answers()
        try await Self.spendTheWindow(forwarder, clock, answers)
        await clock.advance(to: 1059) { await forwarder.settled() }
        try await Self.ask(forwarder, 10, into: answers)   // first: the call freeing at 1060
        await clock.advance(to: 1059.5) { await forwarder.settled() }
        try await Self.ask(forwarder, 11, into: answers)   // second: the call freeing at 1061
        await clock.advance(to: 1060.5) { await forwarder.settled() }
        try await Self.ask(forwarder, 12, into: answers)   // behind the second, though it asks before 1061
        await clock.advance(to: 1063) { await forwarder.settled() }
        #expect(answers.all.map(\.id) == [1, 2, 10, 11, 12])
        #expect(answers.all.map(\.status) == [200, 200, 200, 200, 503], "the third's call frees only at 1120")
        #expect(fetcher.calls.count == 4)
        await forwarder.drain(within: 1)
    }

    @Test func requestsForTheSamePathWaitWithTheMissTheyJoin() async throws {
        let clock = SimulatedClock(1000)
        let fetcher = Self.moviesFetcher()
        let forwarder = Self.forwarder(fetcher, clock: clock)
        let answers = Answers()
        try await Self.spendTheWindow(forwarder, clock, answers)
        await clock.advance(to: 1059.5) { await forwarder.settled() }
        try await Self.ask(forwarder, 3, into: answers)
        try await Self.ask(forwarder, 3, into: answers)
        try await Self.ask(forwarder, 3, into: answers)
        await clock.advance(to: 1060.5) { await forwarder.settled() }
        #expect(answers.all.map(\.status) == [200, 200, 200, 200, 200])
        #expect(fetcher.calls.count == 3, "one call for the three")
        await forwarder.drain(within: 1)
    }

    @Test func aClientWithNoShareLeftIsRefusedAtOnceRatherThanWaitingInLine() async throws {
        let clock = SimulatedClock(1000)
        let fetcher = Self.moviesFetcher()
        let statistics = CacheStatistics()
        let forwarder = Self.forwarder(fetcher, clock: clock, share: 1, statistics: statistics)
        let answers = Answers()
        try await Self.ask(forwarder, 1, as: "a", into: answers)
        await clock.advance(to: 1030) { await forwarder.settled() }
        try await Self.ask(forwarder, 2, as: "b", into: answers)
        await clock.advance(to: 1059.5) { await forwarder.settled() }
        try await Self.ask(forwarder, 3, as: "c", into: answers)   // waits for the call freeing at 1060
        try await Self.ask(forwarder, 4, as: "a", into: answers)   // its one call is spent: no place in line
        await forwarder.settled()
        #expect(answers.all.map(\.id) == [1, 2, 4])
        #expect(answers.all.last?.status == 503)
        #expect(statistics.value(.clientShareDenial) == 1)
        await clock.advance(to: 1061) { await forwarder.settled() }
        #expect(answers.all.map(\.status) == [200, 200, 503, 200])
        #expect(fetcher.calls == ["/movie/1", "/movie/2", "/movie/3"])
        await forwarder.drain(within: 1)
    }

    @Test func beyondTheBoundAMissIsRefusedAtOnce() async throws {
        let clock = SimulatedClock(1000)
        let fetcher = Self.moviesFetcher()
        let forwarder = Self.forwarder(fetcher, clock: clock, waiting: 2)
        let answers = Answers()
        try await Self.ask(forwarder, 1, into: answers)
        try await Self.ask(forwarder, 2, into: answers)
        await clock.advance(to: 1059) { await forwarder.settled() }
        for id in 10...12 { try await Self.ask(forwarder, id, into: answers) }
        #expect(answers.all.map(\.id) == [1, 2, 12], "two wait; the third is refused at once")
        #expect(answers.all.last?.status == 503)
        await clock.advance(to: 1062) { await forwarder.settled() }
        #expect(answers.all.map(\.status) == [200, 200, 503, 200, 200])
        await forwarder.drain(within: 1)
    }

    @Test func aRefreshOfAnEntryPastTwiceItsLifetimeGoesAheadOfTheWaitingMisses() async throws {
        let clock = SimulatedClock(1000)
        let fetcher = Self.moviesFetcher()
        let forwarder = Self.forwarder(fetcher, clock: clock)
        let answers = Answers()
        try await Self.spendTheWindow(forwarder, clock, answers)
        await clock.advance(to: 1059) { await forwarder.settled() }
        try await Self.ask(forwarder, 3, into: answers)   // waits for the call freeing at 1060
        await clock.advance(to: 1059.5) { await forwarder.settled() }
        try await Self.ask(forwarder, 1, into: answers)   // 59.5 s old, lifetime 10 s: stale at once
        #expect(answers.all.map(\.id) == [1, 2, 1])
        await clock.advance(to: 1061.5) { await forwarder.settled() }
        #expect(fetcher.calls == ["/movie/1", "/movie/2", "/movie/1", "/movie/3"], "the refresh took the call at 1060")
        #expect(answers.all.map(\.status) == [200, 200, 200, 200])
        await forwarder.drain(within: 1)
    }
}
