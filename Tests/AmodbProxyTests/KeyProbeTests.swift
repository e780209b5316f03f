import AmodbModels
import AmodbTestSupport
import Foundation
import Testing

@testable import AmodbProxy

@Suite(.timeLimit(.minutes(1)))
struct KeyProbeTests {
    @Test func readinessComesBackWhenAProbeFindsTheKeyAcceptedAgain() async throws {
        let fetcher = ScriptedUpstream(fallback: .status(401, ScriptedUpstream.keyRejected))
        let forwarder = forwarder(fetcher) { $0.keyProbeInterval = 0.001...0.002 }
        let refused = await ask(forwarder, try AmodbRequest(route: .movie(id: 550)))
        #expect(refused.status == 502)
        #expect(forwarder.stages.keyRejected)
        #expect(await eventually { fetcher.calls.count >= 3 }, "probes go on while the key is refused")
        #expect(forwarder.stages.keyRejected)

        fetcher.setFallback(.status(200, ScriptedUpstream.moviePage))
        #expect(await eventually { !forwarder.stages.keyRejected }, "no client request is needed")
        #expect(fetcher.calls.dropFirst().allSatisfy { $0 == "/trending/all/day" }, "one cheap call per probe")
        #expect(forwarder.stages.statistics.value(.keyProbe) == fetcher.calls.count - 1)
        #expect(await eventually { forwarder.stages.tableSizes.tasks == 0 }, "probing stops once the key is accepted")
        await forwarder.stages.drain(within: 1)
    }

    @Test func probesSpendOnlyWhatTheBudgetGrants() async throws {
        let fetcher = ScriptedUpstream(fallback: .status(401, ScriptedUpstream.keyRejected))
        let forwarder = forwarder(fetcher, limit: 4) { $0.keyProbeInterval = 0.001...0.002 }
        _ = await ask(forwarder, try AmodbRequest(route: .movie(id: 550)))
        // The clock stands still: probes take calls only from slack (while the window is at
        // most half spent), so one probe follows the miss, then the budget refuses them.
        #expect(await eventually { forwarder.stages.statistics.value(.budgetDenial) >= 3 })
        #expect(fetcher.calls.count == 2)
        #expect(forwarder.stages.keyRejected)
        await forwarder.stages.drain(within: 1)
    }

    @Test func noProbeRunsWhileTheKeyIsAccepted() async throws {
        let fetcher = ScriptedUpstream()
        let forwarder = forwarder(fetcher) { $0.keyProbeInterval = 0.001...0.002 }
        #expect(await ask(forwarder, try AmodbRequest(route: .trending(.tv, .day))).status == 200)
        #expect(await eventually { forwarder.stages.tableSizes.tasks == 0 })
        #expect(forwarder.stages.statistics.value(.keyProbe) == 0)
        #expect(!forwarder.stages.keyRejected)
    }

    @Test func shutdownEndsTheProbe() async throws {
        let fetcher = ScriptedUpstream(fallback: .status(402, ScriptedUpstream.keyRejected))
        let forwarder = forwarder(fetcher)  // probes 30–60 s apart: the probe is asleep
        _ = await ask(forwarder, try AmodbRequest(route: .movie(id: 550)))
        #expect(await eventually { forwarder.stages.tableSizes.tasks == 1 })
        forwarder.stages.stopBackgroundWork()
        #expect(await eventually { forwarder.stages.tableSizes.tasks == 0 })
        #expect(fetcher.calls.count == 1)
    }
}
