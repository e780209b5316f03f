import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

@Suite(.timeLimit(.minutes(1)))
struct CacheSnapshotTests {
    private func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("amodb-snapshot-\(UUID().uuidString).json").path
    }

    private func proxy(_ fetcher: ScriptedUpstream, clock: ManualClock, snapshot: String, logs: LogCapture = LogCapture()) throws -> ProxyHarness {
        var configuration = ProxyHarness.configuration()
        configuration.snapshotPath = snapshot
        return try ProxyHarness(configuration: configuration, fetcher: fetcher, clock: clock,
                                logger: ProxyLogger(minimumLevel: .debug, sink: logs.sink))
    }

    @Test func aRestartKeepsTheCacheWithTrueAgesAndSpendsNoBudget() async throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let clock = ManualClock()

        let first = ScriptedUpstream()
        let before = try proxy(first, clock: clock, snapshot: path)
        _ = try await before.get("/3/trending/movie/week")
        _ = try await before.get("/3/trending/tv/day?language=de-DE")
        await before.shutdown()
        #expect(FileManager.default.fileExists(atPath: path))

        clock.advance(by: 100)
        let second = ScriptedUpstream()
        let after = try proxy(second, clock: clock, snapshot: path)
        defer { Task { await after.shutdown() } }
        let response = try await after.get("/3/trending/movie/week")
        #expect(response.header("Cache-Status") == "amodb-proxy; hit; ttl=1700")
        #expect(response.header("Age") == "100")
        #expect(response.text == ScriptedUpstream.moviePage)
        #expect(try await after.get("/3/trending/tv/day?language=de-de").header("Cache-Status")?.contains("hit") == true)
        #expect(second.calls.isEmpty)
    }

    @Test(arguments: [
        "not json at all",
        #"{"format":"something-else","version":1,"writtenAt":0,"entries":[]}"#,
        #"{"format":"amodb-proxy-cache-snapshot","version":99,"writtenAt":0,"entries":[]}"#,
        #"{"format":"amodb-proxy-cache-snapshot","version":1,"entries":[{"key":"/movie/1"#,
        "",
    ])
    func aCorruptOrForeignSnapshotIsIgnoredWithALogLine(_ contents: String) async throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try contents.write(toFile: path, atomically: true, encoding: .utf8)
        let logs = LogCapture()
        let fetcher = ScriptedUpstream()
        let proxy = try proxy(fetcher, clock: ManualClock(), snapshot: path, logs: logs)
        defer { Task { await proxy.shutdown() } }

        #expect(logs.all.contains { $0.contains("cache snapshot ignored") })
        #expect(proxy.proxy.cache.usage.entries == 0)
        #expect(try await proxy.get("/3/trending/movie/week").status == 200)
    }

    @Test func entriesThatFailValidationOrAreTooOldAreDropped() async throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let clock = ManualClock()
        func entry(_ key: String, _ body: String, age: Double) -> String {
            #"{"key":"\#(key)","status":200,"storedAt":\#(clock.now() - age),"lifetime":1800,"body":"\#(Data(body.utf8).base64EncodedString())"}"#
        }
        let poisoned = ScriptedUpstream.moviePage.replacingOccurrences(of: "Fight Club", with: ProxyHarness.key)
        let file = #"{"format":"amodb-proxy-cache-snapshot","version":1,"writtenAt":0,"entries":["#
            + [entry("/trending/movie/week", ScriptedUpstream.moviePage, age: 10),
               entry("/trending/tv/week", poisoned, age: 10),
               entry("/trending/all/week", ScriptedUpstream.moviePage, age: 90_000),
               entry("/not/a/route", ScriptedUpstream.moviePage, age: 10)].joined(separator: ",") + "]}"
        try file.write(toFile: path, atomically: true, encoding: .utf8)

        let proxy = try proxy(ScriptedUpstream(), clock: clock, snapshot: path)
        defer { Task { await proxy.shutdown() } }
        #expect(proxy.proxy.cache.usage.entries == 1)
        #expect(proxy.proxy.cache.entry(for: "/trending/movie/week") != nil)
    }

    @Test func isWrittenPeriodically() async throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var configuration = ProxyHarness.configuration()
        configuration.snapshotPath = path
        configuration.snapshotIntervalSeconds = 1
        let proxy = try ProxyHarness(configuration: configuration, fetcher: ScriptedUpstream())
        defer { Task { await proxy.shutdown() } }

        _ = try await proxy.get("/3/trending/movie/week")
        #expect(await eventually(within: 5) {
            (try? String(contentsOfFile: path, encoding: .utf8))?.contains("week") == true
        })
    }
}
