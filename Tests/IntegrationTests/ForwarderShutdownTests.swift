import AmodbTestSupport
import Foundation
import Testing

@testable import AmodbProxy

private func temporarySnapshotPath() -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("amodb-forwarder-\(UUID().uuidString).json").path
}

@Suite(.timeLimit(.minutes(1)))
struct ForwarderShutdownTests {
    @Test func shutdownWakesARetryWaitingOutA429AndAnswersAtOnce() async throws {
        let fetcher = ScriptedUpstream(fallback: .status(429, "", headers: ["retry-after": "30"]))
        // A grace far shorter than the 30 s wait, yet long enough for a busy machine to answer.
        let harness = try ProxyHarness(
            .live, configuration: ProxyHarness.configuration { $0.shutdownGraceSeconds = 15 }, fetcher: fetcher)
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
        let settings = ProxyHarness.configuration {
            $0.snapshotPath = path
            $0.shutdownGraceSeconds = 0.2
        }
        let harness = try ProxyHarness(.live, configuration: settings, fetcher: fetcher, clock: clock)
        let storedAt = clock.now()
        try await withServer(harness) { _ async throws in
            _ = try await harness.get("/3/trending/movie/week")
            clock.advance(by: 1801)
            fetcher.hold()
            #expect(
                try await harness.get("/3/trending/movie/week").header("Cache-Status")
                    == "amodb-proxy; fwd=stale; ttl=-1")
            #expect(await eventually { fetcher.heldCount == 1 })
            await harness.shutdown()  // the grace ends with the refresh still held
            fetcher.release()
            #expect(await eventually { harness.proxy.forwarderTasks == 0 }, "the refresh has ended")
            #expect(
                harness.proxy.cache.entry(for: "/trending/movie/week")?.storedAt == storedAt,
                "nothing stored after the snapshot")
        }
        let reloaded = try ProxyHarness(.live, configuration: settings, fetcher: ScriptedUpstream(), clock: clock)
        try await withServer(reloaded) { _ async throws in
            #expect(reloaded.proxy.cache.entry(for: "/trending/movie/week")?.storedAt == storedAt)
        }
    }

    @Test func aRefreshEndingWithinTheGraceIsInTheFinalSnapshot() async throws {
        let path = temporarySnapshotPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let fetcher = ScriptedUpstream()
        let clock = ManualClock()
        let settings = ProxyHarness.configuration {
            $0.snapshotPath = path
            $0.shutdownGraceSeconds = 10
        }
        let harness = try ProxyHarness(.live, configuration: settings, fetcher: fetcher, clock: clock)
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
        let reloaded = try ProxyHarness(.live, configuration: settings, fetcher: ScriptedUpstream(), clock: clock)
        try await withServer(reloaded) { _ async throws in
            #expect(
                reloaded.proxy.cache.entry(for: "/trending/movie/week")?.storedAt == clock.now(), "the refreshed copy")
        }
    }
}
