import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

@Suite(.timeLimit(.minutes(1)))
struct ShutdownTests {
    private func harness(delayMilliseconds: Int, grace: Double) throws -> (ProxyHarness, ScriptedUpstream) {
        let fetcher = ScriptedUpstream()
        fetcher.setDelay(milliseconds: delayMilliseconds)
        var configuration = ProxyHarness.configuration()
        configuration.shutdownGraceSeconds = grace
        return (try ProxyHarness(configuration: configuration, fetcher: fetcher), fetcher)
    }

    @Test func finishesRequestsInFlightThenStopsAccepting() async throws {
        let (harness, fetcher) = try harness(delayMilliseconds: 500, grace: 5)
        let port = harness.port
        let inFlight = Task { try await harness.get("/3/trending/movie/week") }
        #expect(await eventually { fetcher.calls.count == 1 }, "the request is in flight")
        let started = ContinuousClock.now
        await harness.shutdown()
        let response = try await inFlight.value
        #expect(response.status == 200)
        #expect(response.header("Connection") == "close")
        #expect(ContinuousClock.now - started < .seconds(3))
        #expect(throws: (any Error).self) { _ = try RawHTTPConnection(port: port) }
    }

    @Test func closesIdleKeepAliveConnectionsAtOnce() async throws {
        let (harness, _) = try harness(delayMilliseconds: 0, grace: 10)
        let port = harness.port
        let closed = Task {
            try await offloaded {
                let connection = try RawHTTPConnection(port: port)
                try connection.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                _ = try connection.readResponse()
                return connection.waitForClose(seconds: 5)
            }
        }
        #expect(await eventually { harness.proxy.connectionCount == 1 })
        try await Task.sleep(for: .milliseconds(100))   // answered, now idle
        let started = ContinuousClock.now
        await harness.shutdown()
        #expect(ContinuousClock.now - started < .seconds(2), "idle connections must not hold shutdown for the grace period")
        #expect(try await closed.value)
        #expect(harness.proxy.connectionCount == 0)
    }

    @Test func dropsWhatIsStillRunningWhenTheGracePeriodEnds() async throws {
        let (harness, fetcher) = try harness(delayMilliseconds: 5_000, grace: 0.5)
        let inFlight = Task { try await harness.get("/3/trending/movie/week") }
        #expect(await eventually { fetcher.calls.count == 1 }, "the request is in flight")
        let started = ContinuousClock.now
        await harness.shutdown()
        #expect(ContinuousClock.now - started < .seconds(2))
        await #expect(throws: (any Error).self) { _ = try await inFlight.value }
    }
}
