import AmodbHTTP
import AmodbModels
import AmodbPlanner
import AmodbTestSupport
import Synchronization
import Testing

@testable import AmodbProxy

/// The queue is fair: a client holds no more places than it has calls left in its share,
/// nor more than a fixed part of the queue, so a few clients cannot lock the others out.
@Suite(.timeLimit(.minutes(1)))
struct FairMissQueueTests {
    /// Misses refused without waiting, by client.
    private final class Refusals: Sendable {
        private let counts = Mutex<[String: Int]>([:])
        var byClient: [String: Int] { counts.withLock { $0 } }
        var total: Int { counts.withLock { $0.values.reduce(0, +) } }
        func add(_ client: String) { counts.withLock { $0[client, default: 0] += 1 } }
    }

    /// A budget whose window is spent until `frees` and whose clients have `share` calls each.
    private static func spent(share: Int, frees: Double) -> UpstreamBudget {
        let budget = UpstreamBudget(limit: 1, shares: CallerShare(callsPerWindow: share))
        #expect(budget.acquire(.miss, client: "someone", now: frees - UpstreamBudget.window) == .granted)
        return budget
    }

    @Test func threeClientsCannotFillTheQueueAgainstAFourth() async throws {
        let clock = SimulatedClock(1000)
        let tasks = BackgroundTasks(clock: clock)
        let queue = MissQueue(wait: 2, capacity: 256)
        let budget = Self.spent(share: 120, frees: 1001)
        let refusedAtOnce = Refusals()
        await withTaskGroup(of: Void.self) { group in
            for client in ["a", "b", "c"] {
                for _ in 0..<120 {
                    group.addTask {
                        let decision = await queue.acquire(from: budget, client: client, clock: clock, tasks: tasks)
                            .decision
                        if clock.now() == 1000 {
                            #expect(decision == .denied(retryAfter: 2), "told to retry once those ahead are answered")
                            refusedAtOnce.add(client)
                        }
                    }
                }
            }
            // Every client's misses have joined or been refused before the fourth asks.
            while refusedAtOnce.total < 3 * (120 - queue.placesPerClient) {
                await Task.yield()
            }
            #expect(queue.count == 3 * queue.placesPerClient)
            group.addTask {
                let decision = await queue.acquire(from: budget, client: "d", clock: clock, tasks: tasks).decision
                #expect(clock.now() > 1000, "the fourth client waited in line")
                // Granted, or refused once in line: told the window's next call (60 s) if it
                // reached the head before its wait ran out, else to retry after its wait (2 s),
                // whichever the wake-ups' order on a busy machine made it.
                #expect(
                    decision.isGranted || decision == .denied(retryAfter: 60) || decision == .denied(retryAfter: 2),
                    "\(decision)")
            }
            while queue.count < 3 * queue.placesPerClient + 1 { await Task.yield() }
            await clock.advance(to: 1010) { await tasks.settled() }
        }
        #expect(refusedAtOnce.byClient == ["a": 104, "b": 104, "c": 104])
    }

    @Test func aClientWithOneCallLeftHoldsOnePlace() async throws {
        let clock = SimulatedClock(1000)
        let tasks = BackgroundTasks(clock: clock)
        let queue = MissQueue(wait: 2, capacity: 256)
        let budget = UpstreamBudget(limit: 2, shares: CallerShare(callsPerWindow: 2))
        #expect(budget.acquire(.miss, client: "a", now: 941) == .granted)  // a has one call left
        #expect(budget.acquire(.miss, client: "b", now: 941) == .granted)  // the window is spent until 1001
        await withTaskGroup(of: CallDecision.self) { group in
            group.addTask { await queue.acquire(from: budget, client: "a", clock: clock, tasks: tasks).decision }
            while queue.count < 1 { await Task.yield() }
            let second = await queue.acquire(from: budget, client: "a", clock: clock, tasks: tasks).decision
            #expect(second == .denied(retryAfter: 2), "its one call left holds one place")
            await clock.advance(to: 1002) { await tasks.settled() }
            #expect(await group.next() == .granted)
        }
    }
}
