import AmodbHTTP
import AmodbModels
import AmodbPlanner
import AmodbTestSupport
import Synchronization
import Testing

@testable import AmodbProxy

/// Misses waiting for a call once the window is spent (`MissQueue`), on a simulated clock:
/// each wait ends exactly when the clock passes it, so nothing here waits in real time.
@Suite(.timeLimit(.minutes(1)))
struct MissQueueTests {
    /// Answers in the order they were given, each with the movie it answers.
    private final class Answers: Sendable {
        private let list = Mutex<[(id: Int, status: Int)]>([])
        var all: [(id: Int, status: Int)] { list.withLock { $0 } }
        func add(_ id: Int, _ response: ProxyAnswer) { list.withLock { $0.append((id, response.status)) } }
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

    /// One test's forwarder over `Movies`, on a clock starting at 1000, and the answers it gave.
    private struct Scene {
        let clock = SimulatedClock(1000)
        let fetcher = Movies()
        let answers = Answers()
        let forwarder: ProxyDriver

        /// Two calls a minute, movies fresh for 10 s; misses wait `wait` seconds, `waiting` of them at most; each
        /// client's share is `share` calls (none: no share).
        init(wait: Double = 2, waiting: Int = 256, share: Int? = nil, statistics: CacheStatistics = CacheStatistics()) {
            var configuration = ProxyConfiguration()
            configuration.missWait = wait
            configuration.movieTTL = 10
            configuration.clientUpstreamShare = 1
            var policy = CacheStages.Policy(configuration)
            policy.maxWaitingMisses = waiting
            forwarder = cacheDriver(
                fetcher: fetcher,
                window: UpstreamBudget(limit: 2, shares: share.map { CallerShare(callsPerWindow: $0) }),
                clock: clock, policy: policy, statistics: statistics)
        }

        /// Asks for movie `id` at the clock's time; its answer lands in `answers` when given.
        func ask(_ id: Int, as client: String? = nil) async throws {
            let request = try AmodbRequest(route: .movie(id: id))
            if let now = forwarder.respond(
                to: request, ifNoneMatch: nil, client: client, later: { [answers] in { answers.add(id, $0) } })
            {
                answers.add(id, now)
            }
            await forwarder.stages.settled()
        }

        /// Moves the clock to `time`, the forwarder settling at each step.
        func advance(to time: Double) async {
            await clock.advance(to: time) { await forwarder.stages.settled() }
        }

        /// Movies 1 and 2 fetched at 1000 and 1001: the window of 2 is spent until 1060, then 1061.
        func spendTheWindow() async throws {
            try await ask(1)
            await advance(to: 1001)
            try await ask(2)
        }
    }

    @Test func aMissWaitsForTheCallThatFreesWithinItsWaitAndIsServed() async throws {
        let scene = Scene()
        try await scene.spendTheWindow()
        await scene.advance(to: 1059.5)
        try await scene.ask(3)  // the window is spent; a call frees at 1060
        #expect(scene.answers.all.count == 2, "it waits")
        #expect(scene.forwarder.stages.tableSizes.tasks == 1)
        await scene.advance(to: 1060.2)
        #expect(scene.answers.all.map(\.status) == [200, 200, 200])
        #expect(scene.fetcher.calls.count == 3)
        await scene.forwarder.stages.drain(within: 1)
    }

    @Test func withoutAWaitTheSameMissIsRefusedAtOnce() async throws {
        let scene = Scene(wait: 0)
        try await scene.spendTheWindow()
        await scene.advance(to: 1059.5)
        try await scene.ask(3)
        #expect(scene.answers.all.map(\.status) == [200, 200, 503])
        #expect(scene.fetcher.calls.count == 2)
        await scene.forwarder.stages.drain(within: 1)
    }

    @Test func aMissWhoseCallFreesAfterItsWaitIsRefusedWithoutWaiting() async throws {
        let scene = Scene()
        try await scene.ask(1)
        try await scene.ask(2)
        await scene.advance(to: 1030)
        try await scene.ask(3)  // the next call frees in 30 s
        #expect(scene.answers.all.map(\.status) == [200, 200, 503], "answered with no time passing")
        await scene.forwarder.stages.drain(within: 1)
    }

    @Test func waitingMissesAreServedInTurnAndLateComersDoNotOvertake() async throws {
        let scene = Scene()
        try await scene.spendTheWindow()
        await scene.advance(to: 1059)
        try await scene.ask(10)  // first: the call freeing at 1060
        await scene.advance(to: 1059.5)
        try await scene.ask(11)  // second: the call freeing at 1061
        await scene.advance(to: 1060.5)
        try await scene.ask(12)  // behind the second, though it asks before 1061
        await scene.advance(to: 1063)
        #expect(scene.answers.all.map(\.id) == [1, 2, 10, 11, 12])
        #expect(scene.answers.all.map(\.status) == [200, 200, 200, 200, 503], "the third's call frees only at 1120")
        #expect(scene.fetcher.calls.count == 4)
        await scene.forwarder.stages.drain(within: 1)
    }

    @Test func requestsForTheSamePathWaitWithTheMissTheyJoin() async throws {
        let scene = Scene()
        try await scene.spendTheWindow()
        await scene.advance(to: 1059.5)
        try await scene.ask(3)
        try await scene.ask(3)
        try await scene.ask(3)
        await scene.advance(to: 1060.5)
        #expect(scene.answers.all.map(\.status) == [200, 200, 200, 200, 200])
        #expect(scene.fetcher.calls.count == 3, "one call for the three")
        await scene.forwarder.stages.drain(within: 1)
    }

    @Test func aClientWithNoShareLeftIsRefusedAtOnceRatherThanWaitingInLine() async throws {
        let statistics = CacheStatistics()
        let scene = Scene(share: 1, statistics: statistics)
        try await scene.ask(1, as: "a")
        await scene.advance(to: 1030)
        try await scene.ask(2, as: "b")
        await scene.advance(to: 1059.5)
        try await scene.ask(3, as: "c")  // waits for the call freeing at 1060
        try await scene.ask(4, as: "a")  // its one call is spent: no place in line
        await scene.forwarder.stages.settled()
        #expect(scene.answers.all.map(\.id) == [1, 2, 4])
        #expect(scene.answers.all.last?.status == 503)
        #expect(statistics.value(.clientShareDenial) == 1)
        await scene.advance(to: 1061)
        #expect(scene.answers.all.map(\.status) == [200, 200, 503, 200])
        #expect(scene.fetcher.calls == ["/movie/1", "/movie/2", "/movie/3"])
        await scene.forwarder.stages.drain(within: 1)
    }

    @Test func beyondTheBoundAMissIsRefusedAtOnce() async throws {
        let scene = Scene(waiting: 2)
        try await scene.ask(1)
        try await scene.ask(2)
        await scene.advance(to: 1059)
        for id in 10...12 { try await scene.ask(id) }
        #expect(scene.answers.all.map(\.id) == [1, 2, 12], "two wait; the third is refused at once")
        #expect(scene.answers.all.last?.status == 503)
        await scene.advance(to: 1062)
        #expect(scene.answers.all.map(\.status) == [200, 200, 503, 200, 200])
        await scene.forwarder.stages.drain(within: 1)
    }

    @Test func aRefreshOfAnEntryPastTwiceItsLifetimeGoesAheadOfTheWaitingMisses() async throws {
        let scene = Scene()
        try await scene.spendTheWindow()
        await scene.advance(to: 1059)
        try await scene.ask(3)  // waits for the call freeing at 1060
        await scene.advance(to: 1059.5)
        try await scene.ask(1)  // 59.5 s old, lifetime 10 s: stale at once
        #expect(scene.answers.all.map(\.id) == [1, 2, 1])
        await scene.advance(to: 1061.5)
        #expect(
            scene.fetcher.calls == ["/movie/1", "/movie/2", "/movie/1", "/movie/3"], "the refresh took the call at 1060"
        )
        #expect(scene.answers.all.map(\.status) == [200, 200, 200, 200])
        await scene.forwarder.stages.drain(within: 1)
    }
}
