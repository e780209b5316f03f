import AmodbTestSupport
import Foundation
import Testing

@testable import AmodbProxy

@Suite(.timeLimit(.minutes(1)))
struct LogRepeatTests {
    private func objects(_ capture: LogCapture) throws -> [[String: String]] {
        try capture.all.map { try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String]) }
    }

    @Test func repeatsOfAWarningBecomeOneLineWithACountWhenTheWindowEnds() async throws {
        let capture = LogCapture()
        let logger = ProxyLogger(repeatWindow: 0.3, repeatBurst: 3, sink: capture.sink)
        for index in 0..<1000 {
            logger.warning(
                "upstream budget spent; not calling amodb", ["path": "/movie/\(index)", "retry_after": "12"])
        }
        #expect(capture.all.count == 3, "the first few go out at once, the rest wait for the window to end")
        #expect(await eventually { capture.all.count == 4 })
        let lines = try objects(capture)
        #expect(lines.prefix(3).map { $0["path"] } == ["/movie/0", "/movie/1", "/movie/2"])
        #expect(lines[3]["message"] == "upstream budget spent; not calling amodb")
        #expect(lines[3]["level"] == "warning")
        #expect(lines[3]["repeated"] == "997")
        #expect(lines[3]["window_seconds"] == "0.3")

        // The window closed: the next one is written at once again.
        logger.warning("upstream budget spent; not calling amodb", ["path": "/movie/1000"])
        #expect(try objects(capture).last?["path"] == "/movie/1000")
    }

    @Test func aKindIsItsLevelAndMessageAndALoneLineGetsNoSummary() async throws {
        let capture = LogCapture()
        let logger = ProxyLogger(minimumLevel: .debug, repeatWindow: 0.2, repeatBurst: 1, sink: capture.sink)
        logger.warning("amodb failed", ["upstream_status": "500"])
        logger.error("amodb failed", ["upstream_status": "500"])
        logger.warning("amodb is unreachable")
        for _ in 0..<3 { logger.debug("cache snapshot written") }  // debugging wants every line
        #expect(capture.all.count == 6)
        #expect(await eventually { logger.openRepeatWindows == 0 })
        #expect(capture.all.count == 6, "the windows closed without a summary: nothing was held back")
    }

    @Test func copiesShareTheirLevelSoAReloadReachesEveryOne() {
        let capture = LogCapture()
        let logger = ProxyLogger(minimumLevel: .warning, sink: capture.sink)
        let copy = logger
        copy.info("not yet")
        logger.setMinimumLevel(.debug)
        copy.debug("now")
        #expect(capture.all.count == 1)
        #expect(copy.minimumLevel == .debug)
    }

    @Test func aSpentBudgetWritesAFewWarningsNotOnePerDeniedMiss() async throws {
        var configuration = ProxyHarness.configuration()
        configuration.rateLimit = 4
        let capture = LogCapture()
        let harness = try ProxyHarness(
            configuration: configuration, fetcher: ScriptedUpstream(),
            // One repeat window for the whole test, however slow the machine: the burst's ten lines.
            logger: ProxyLogger(secrets: [], repeatWindow: 3_600, sink: capture.sink))
        try await withServer(harness) { harness throws in
            var denied = 0
            for page in 1...60 where try await harness.get("/3/trending/movie/week?page=\(page)").status == 503 {
                denied += 1
            }
            #expect(denied > 50)
            // Ten a window (the default burst), then silence until the window ends.
            #expect(capture.all.filter { $0.contains("upstream budget spent") }.count == 10)
        }
    }
}
