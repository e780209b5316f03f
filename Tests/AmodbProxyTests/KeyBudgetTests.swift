import AmodbHTTP
import AmodbModels
import AmodbPlanner
import AmodbTestSupport
import Synchronization
import Testing

@testable import AmodbProxy

/// The one owner of the key's budget (`KeyBudget`) as the forwarder uses it, on a simulated
/// clock: the pause after amodb's 429 ends with one probe, not with every waiting miss.
@Suite(.timeLimit(.minutes(1)))
struct KeyBudgetTests {
    /// amodb answering each call from a script of statuses (the last repeats), recording when each call came.
    private final class Upstream: UpstreamFetcher {
        private let state = Mutex<(times: [Double], statuses: [Int])>(([], []))
        let clock: SimulatedClock
        let retryAfter: String?

        init(clock: SimulatedClock, statuses: [Int], retryAfter: String? = "2") {
            self.clock = clock
            self.retryAfter = retryAfter
            state.withLock { $0.statuses = statuses }
        }

        var times: [Double] { state.withLock { $0.times } }

        func setStatuses(_ statuses: [Int]) { state.withLock { $0.statuses = statuses } }

        func fetch(_ request: AmodbRequest) async -> Result<UpstreamResponse, UpstreamError> {
            let status = state.withLock { state in
                state.times.append(clock.now())
                return state.statuses.count > 1 ? state.statuses.removeFirst() : state.statuses[0]
            }
            guard status == 200, case .movie(let id) = request.route else {
                let headers = status == 429 ? (retryAfter.map { ["retry-after": $0] } ?? [:]) : [:]
                return .success(UpstreamResponse(status: status, headers: headers, body: Array("{}".utf8)))
            }
            return .success(UpstreamResponse(status: 200, body: Array(#"{"id":\#(id),"title":"t"}"#.utf8)))
        }
    }

    private final class Answers: Sendable {
        private let list = Mutex<[Int]>([])
        var statuses: [Int] { list.withLock { $0 } }
        func add(_ response: ProxyAnswer) { list.withLock { $0.append(response.status) } }
    }

    private struct Scene {
        let clock = SimulatedClock(1000)
        let upstream: Upstream
        let answers = Answers()
        let forwarder: ProxyDriver

        init(statuses: [Int], retryAfter: String? = "2", missWait: Double = 2) {
            upstream = Upstream(clock: clock, statuses: statuses, retryAfter: retryAfter)
            var configuration = ProxyConfiguration()
            configuration.missWait = missWait
            configuration.clientUpstreamShare = 1
            forwarder = cacheDriver(
                fetcher: upstream, window: UpstreamBudget(limit: 40), clock: clock,
                policy: CacheStages.Policy(configuration))
        }

        func ask(_ id: Int) async throws {
            let request = try AmodbRequest(route: .movie(id: id))
            if let now = forwarder.respond(
                to: request, ifNoneMatch: nil, client: nil, later: { [answers] in { answers.add($0) } })
            {
                answers.add(now)
            }
        }

        func advance(to time: Double) async {
            await clock.advance(to: time) { await forwarder.stages.settled() }
        }
    }

    @Test func whenA429sPauseEndsOneProbeGoesAndTheRestWaitForIt() async throws {
        let scene = Scene(statuses: [429])
        for id in 1...5 { try await scene.ask(id) }
        await scene.forwarder.stages.settled()
        await scene.advance(to: 1010)
        let after = scene.upstream.times.filter { $0 > 1000 && $0 <= 1004 }
        #expect(after.count <= 3, "one probe a pause, not the queue: \(scene.upstream.times)")
        #expect(after == [1002, 1004])
        #expect(scene.answers.statuses == [503, 503, 503, 503, 503], "each told to come back later")
        await scene.forwarder.stages.drain(within: 1)
    }

    @Test func theWaitingMissesFollowOnceTheProbeSucceeds() async throws {
        let scene = Scene(statuses: [429, 200], missWait: 5)
        try await scene.ask(1)
        await scene.forwarder.stages.settled()
        for id in 2...3 { try await scene.ask(id) }
        await scene.forwarder.stages.settled()
        await scene.advance(to: 1010)
        // A 429 at 1000; the probe at 1002 succeeds, then the two misses waiting follow.
        #expect(scene.upstream.times == [1000, 1002, 1002, 1002])
        #expect(scene.answers.statuses == [200, 200, 200])
        await scene.forwarder.stages.drain(within: 1)
    }

    @Test func withoutARetryAfterThePauseDoublesWhileAmodbKeepsRefusing() async throws {
        let scene = Scene(statuses: [429], retryAfter: nil, missWait: 0)
        try await scene.ask(1)
        await scene.forwarder.stages.settled()
        await scene.advance(to: 1100)
        // 1 s, then 2 s, then 4 s between probes; the miss gave up after its two retries.
        #expect(scene.upstream.times == [1000, 1001, 1003])
        try await scene.ask(2)  // at 1100, the pause (8 s from 1003) long over: the probe
        await scene.forwarder.stages.settled()
        await scene.advance(to: 1200)
        #expect(scene.upstream.times.count == 6)
        let gaps = zip(scene.upstream.times.dropFirst(3), scene.upstream.times.dropFirst(4)).map { $1 - $0 }
        #expect(gaps == [8, 16], "the pause keeps doubling until amodb answers: \(scene.upstream.times)")
        await scene.forwarder.stages.drain(within: 1)
    }

    @Test func aProbeWhoseAnswerIsLostLetsAnotherTryAfterItsTime() {
        let budget = UpstreamBudget(limit: 10, shares: nil, callTimeout: 5)
        budget.exhaust(for: 2, now: 0)
        #expect(budget.acquire(.miss, now: 1) == .denied(retryAfter: 1))
        #expect(budget.acquire(.miss, now: 2) == .probe)
        #expect(budget.acquire(.miss, now: 3) == .denied(retryAfter: UpstreamBudget.probePoll))
        #expect(budget.acquire(.miss, now: 7.5) == .probe, "the first probe's time ran out")
        budget.reopen(now: 8)
        #expect(budget.acquire(.miss, now: 8) == .granted)
        #expect(budget.acquire(.miss, now: 8) == .granted)
    }

    @Test func aCallCountsFromWhenItCameBackForAmodbMayHaveReceivedItThen() {
        let budget = UpstreamBudget(limit: 1)
        #expect(budget.acquire(.miss, now: 0) == .granted)
        budget.completed(grantedAt: 0, now: 5, answered: true)  // a slow call: amodb may have counted it at 4.9
        #expect(budget.acquire(.miss, now: 61) == .denied(retryAfter: 4))
        #expect(budget.acquire(.miss, now: 65.5) == .granted)
    }

    /// A call given up with no answer (a timeout) may still be read by amodb after the proxy
    /// closed the connection: it counts a call's time past when it was given up.
    @Test func aCallGivenUpCountsACallsTimeLongerForAmodbMayStillReadIt() {
        let budget = UpstreamBudget(limit: 1, shares: nil, callTimeout: 12)
        #expect(budget.acquire(.miss, now: 0) == .granted)
        budget.completed(grantedAt: 0, now: 10, answered: false)
        #expect(budget.acquire(.miss, now: 71) == .denied(retryAfter: 11))
        #expect(budget.acquire(.miss, now: 82.5) == .granted)
    }

    /// The same through the budget's owner: a call whose fetch failed (`unanswered`) holds
    /// its place in the window a call's time longer than one that was answered.
    @Test func keyBudgetCountsAnUnansweredCallLongerThanAnAnsweredOne() async {
        let clock = ManualClock()
        let window = UpstreamBudget(limit: 2, shares: nil, callTimeout: 12)
        let budget = KeyBudget(
            window: window, missWait: 0, queueCapacity: 4, clock: clock, tasks: BackgroundTasks(clock: clock))
        let answered = await budget.callForMiss(client: nil)
        let givenUp = await budget.callForMiss(client: nil)
        #expect(answered.isGranted && givenUp.isGranted)
        clock.advance(by: 10)
        _ = await budget.answered(status: 200, headers: [:], retryAfter: nil, grant: answered)
        await budget.unanswered(grant: givenUp)
        clock.advance(by: 60.5)
        #expect(budget.used(now: clock.now()) == 1, "the answered call left the window; the one given up did not")
        clock.advance(by: 12)
        #expect(budget.used(now: clock.now()) == 0)
    }
}
