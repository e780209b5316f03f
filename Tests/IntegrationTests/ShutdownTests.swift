import AmodbProxy
import AmodbTestSupport
import Foundation
import Synchronization
import Testing

/// A flag one thread raises and another waits on.
private final class Flag: Sendable {
    private let raised = Atomic<Bool>(false)
    func raise() { raised.store(true, ordering: .relaxed) }
    var isRaised: Bool { raised.load(ordering: .relaxed) }
}

/// Whether a new connection to `port` is refused (the listener is closed).
private func refusesConnections(_ port: Int) -> Bool {
    (try? RawHTTPConnection(port: port)) == nil
}

/// No wall-clock limits here: a shutdown that waited for its grace period when it should
/// not would wait minutes (the grace given), and the suite's time limit fails it.
@Suite(.timeLimit(.minutes(1)))
struct ShutdownTests {
    private func harness(grace: Double) throws -> (ProxyHarness, ScriptedUpstream) {
        let fetcher = ScriptedUpstream()
        var configuration = ProxyHarness.configuration()
        configuration.shutdownGraceSeconds = grace
        return (try ProxyHarness(.live, configuration: configuration, fetcher: fetcher), fetcher)
    }

    @Test func finishesRequestsInFlightThenStopsAccepting() async throws {
        let (harness, fetcher) = try harness(grace: 600)
        let port = harness.port
        fetcher.hold()
        let inFlight = Task { try await harness.get("/3/trending/movie/week") }
        #expect(await eventually { fetcher.heldCount == 1 }, "the request is in flight")
        let shutdown = Task { await harness.shutdown() }
        #expect(await eventually { refusesConnections(port) }, "no new connections once shutting down")
        fetcher.release()
        let response = try await inFlight.value
        #expect(response.status == 200)
        #expect(response.header("Connection") == "close")
        await shutdown.value
        #expect(harness.proxy.connectionCount == 0)
    }

    @Test func closesIdleKeepAliveConnectionsAtOnce() async throws {
        let (harness, _) = try harness(grace: 600)
        let port = harness.port
        let answered = Flag()
        let closed = Task {
            try await offloaded {
                let connection = try RawHTTPConnection(port: port)
                try connection.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                let response = try connection.readResponse()
                answered.raise()  // answered: the connection is now idle
                return (response?.status, connection.waitForClose(seconds: 30))
            }
        }
        #expect(await eventually { answered.isRaised })
        await harness.shutdown()  // with 600 s of grace: returns at once only if idle connections close at once
        let (status, wasClosed) = try await closed.value
        #expect(status == 200)
        #expect(wasClosed)
        #expect(harness.proxy.connectionCount == 0)
    }

    @Test func dropsWhatIsStillRunningWhenTheGracePeriodEnds() async throws {
        let (harness, fetcher) = try harness(grace: 0.5)
        fetcher.hold()  // never answered within the grace period
        let inFlight = Task { try await harness.get("/3/trending/movie/week") }
        #expect(await eventually { fetcher.heldCount == 1 }, "the request is in flight")
        await harness.shutdown()  // returns only because the grace period ended
        await #expect(throws: (any Error).self) { _ = try await inFlight.value }
        #expect(harness.proxy.connectionCount == 0)
        fetcher.release()
    }
}
