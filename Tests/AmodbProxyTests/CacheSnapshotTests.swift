import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

@Suite(.timeLimit(.minutes(1)))
struct CacheSnapshotTests {
    private func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("amodb-snapshot-\(UUID().uuidString).json").path
    }

    private func proxy(
        _ fetcher: ScriptedUpstream, clock: ManualClock, snapshot: String, logs: LogCapture = LogCapture()
    ) throws -> ProxyHarness {
        var configuration = ProxyHarness.configuration()
        configuration.snapshotPath = snapshot
        return try ProxyHarness(
            configuration: configuration, fetcher: fetcher, clock: clock,
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
        try await withServer(try proxy(second, clock: clock, snapshot: path)) { (after: ProxyHarness) async throws in
            let response = try await after.get("/3/trending/movie/week")
            #expect(response.header("Cache-Status") == "amodb-proxy; hit; ttl=1700")
            #expect(response.header("Age") == "100")
            #expect(response.text == ScriptedUpstream.moviePage)
            #expect(
                try await after.get("/3/trending/tv/day?language=de-de").header("Cache-Status")?.contains("hit") == true
            )
            #expect(second.calls.isEmpty)
        }
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
        try await withServer(try proxy(fetcher, clock: ManualClock(), snapshot: path, logs: logs)) {
            (proxy: ProxyHarness) async throws in
            #expect(logs.all.contains { $0.contains("cache snapshot ignored") })
            #expect(proxy.proxy.cache.usage.entries == 0)
            #expect(try await proxy.get("/3/trending/movie/week").status == 200)
        }
    }

    @Test func entriesThatFailValidationOrAreTooOldAreDropped() async throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let clock = ManualClock()
        func entry(_ key: String, _ body: String, age: Double) -> String {
            #"{"key":"\#(key)","status":200,"storedAt":\#(clock.now() - age),"lifetime":1800,"body":"\#(Data(body.utf8).base64EncodedString())"}"#
        }
        let poisoned = ScriptedUpstream.moviePage.replacingOccurrences(of: "Fight Club", with: ProxyHarness.key)
        let file =
            #"{"format":"amodb-proxy-cache-snapshot","version":1,"writtenAt":0,"entries":["#
            + [
                entry("/trending/movie/week", ScriptedUpstream.moviePage, age: 10),
                entry("/trending/tv/week", poisoned, age: 10),
                entry("/trending/all/week", ScriptedUpstream.moviePage, age: 90_000),
                entry("/not/a/route", ScriptedUpstream.moviePage, age: 10),
            ].joined(separator: ",") + "]}"
        try file.write(toFile: path, atomically: true, encoding: .utf8)

        try await withServer(try proxy(ScriptedUpstream(), clock: clock, snapshot: path)) { proxy in
            #expect(proxy.proxy.cache.usage.entries == 1)
            #expect(proxy.proxy.cache.entry(for: "/trending/movie/week") != nil)
        }
    }

    @Test func isWrittenPeriodically() async throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var configuration = ProxyHarness.configuration()
        configuration.snapshotPath = path
        configuration.snapshotIntervalSeconds = 1
        try await withServer(try ProxyHarness(configuration: configuration, fetcher: ScriptedUpstream())) {
            (proxy: ProxyHarness) async throws in
            _ = try await proxy.get("/3/trending/movie/week")
            #expect(
                await eventually(within: 30) {
                    (try? String(contentsOfFile: path, encoding: .utf8))?.contains("week") == true
                })
        }
    }

    /// One hostile or stale entry, next to a good one, and why it must be dropped.
    static let hostileEntries: [(String, String)] = [
        (
            "a lifetime of 1e300",
            #"{"key":"/trending/tv/week","status":200,"storedAt":NOW,"lifetime":1e300,"body":"PAGE"}"#
        ),
        ("a 404 kept for 1e12 s", #"{"key":"/movie/9","status":404,"storedAt":NOW,"lifetime":1e12,"body":"NOTFOUND"}"#),
        (
            "a lifetime beyond AMODB_CACHE_TTL",
            #"{"key":"/trending/tv/week","status":200,"storedAt":NOW,"lifetime":1801,"body":"PAGE"}"#
        ),
        (
            "a movie's lifetime beyond AMODB_MOVIE_TTL",
            #"{"key":"/movie/550","status":200,"storedAt":NOW,"lifetime":1801,"body":"MOVIE550"}"#
        ),
        (
            "a negative lifetime",
            #"{"key":"/trending/tv/week","status":200,"storedAt":NOW,"lifetime":-5,"body":"PAGE"}"#
        ),
        ("a zero lifetime", #"{"key":"/trending/tv/week","status":200,"storedAt":NOW,"lifetime":0,"body":"PAGE"}"#),
        (
            "a lifetime out of Double's range",
            #"{"key":"/trending/tv/week","status":200,"storedAt":NOW,"lifetime":1e400,"body":"PAGE"}"#
        ),
        (
            "stored far in the future",
            #"{"key":"/trending/tv/week","status":200,"storedAt":1e300,"lifetime":1800,"body":"PAGE"}"#
        ),
        (
            "stored at minus 1e300",
            #"{"key":"/trending/tv/week","status":200,"storedAt":-1e300,"lifetime":1800,"body":"PAGE"}"#
        ),
        (
            "a lifetime that is a string",
            #"{"key":"/trending/tv/week","status":200,"storedAt":NOW,"lifetime":"1800","body":"PAGE"}"#
        ),
        (
            "movie 550 under /movie/5",
            #"{"key":"/movie/5","status":200,"storedAt":NOW,"lifetime":1800,"body":"MOVIE550"}"#
        ),
        (
            "a trending page under a movie key",
            #"{"key":"/movie/550","status":200,"storedAt":NOW,"lifetime":1800,"body":"PAGE"}"#
        ),
        (
            "a key in no canonical form",
            #"{"key":"/movie/550?language=de-de","status":200,"storedAt":NOW,"lifetime":1800,"body":"MOVIE550"}"#
        ),
        (
            "a status never stored",
            #"{"key":"/movie/550","status":500,"storedAt":NOW,"lifetime":1800,"body":"MOVIE550"}"#
        ),
        (
            "a 404 whose body is a movie",
            #"{"key":"/movie/550","status":404,"storedAt":NOW,"lifetime":300,"body":"MOVIE550"}"#
        ),
        (
            "a 404 whose body holds the key",
            #"{"key":"/movie/9","status":404,"storedAt":NOW,"lifetime":300,"body":"KEYED404"}"#
        ),
        ("a 404 no longer fresh", #"{"key":"/movie/9","status":404,"storedAt":OLD,"lifetime":300,"body":"NOTFOUND"}"#),
    ]

    @Test(arguments: 0..<hostileEntries.count)
    func aHostileEntryIsDroppedWithALogLineAndTheRestLoad(_ index: Int) async throws {
        let (name, template) = Self.hostileEntries[index]
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let clock = ManualClock()
        let base64 = { (text: String) in Data(text.utf8).base64EncodedString() }
        let hostile =
            template
            .replacingOccurrences(of: "NOW", with: String(clock.now() - 10))
            .replacingOccurrences(of: "OLD", with: String(clock.now() - 400))
            .replacingOccurrences(of: "MOVIE550", with: base64(ScriptedUpstream.movieDetails))
            .replacingOccurrences(of: "PAGE", with: base64(ScriptedUpstream.moviePage))
            .replacingOccurrences(
                of: "NOTFOUND",
                with: base64(
                    #"{"status_code":404,"status_message":"The resource you requested could not be found.","success":false}"#
                )
            )
            .replacingOccurrences(
                of: "KEYED404",
                with: base64(#"{"status_code":404,"status_message":"\#(ProxyHarness.key)","success":false}"#))
        let good =
            #"{"key":"/trending/movie/week","status":200,"storedAt":\#(clock.now() - 10),"lifetime":1800,"body":"\#(base64(ScriptedUpstream.moviePage))"}"#
        try
            (#"{"format":"amodb-proxy-cache-snapshot","version":1,"writtenAt":0,"entries":["# + hostile + "," + good
            + "]}")
            .write(toFile: path, atomically: true, encoding: .utf8)

        let key = String(template.split(separator: "\"")[3])
        let logs = LogCapture()
        let fetcher = ScriptedUpstream(
            fallback: .response(
                UpstreamResponse(
                    status: 200,
                    body: Array(
                        (key.hasPrefix("/movie") ? ScriptedUpstream.movieDetails : ScriptedUpstream.moviePage).utf8))))
        try await withServer(try proxy(fetcher, clock: clock, snapshot: path, logs: logs)) {
            (proxy: ProxyHarness) async throws in
            #expect(proxy.proxy.cache.usage.entries == 1, "\(name)")
            #expect(logs.all.filter { $0.contains("cache snapshot entry dropped") }.count == 1, "\(name)")
            #expect(
                try await proxy.get("/3/trending/movie/week").header("Cache-Status") == "amodb-proxy; hit; ttl=1790")
            // The dropped entry's path is fetched afresh and served as amodb sends it now.
            let response = try await proxy.get("/3" + key)
            #expect(response.status == 200, "\(name)")
            #expect(response.header("Cache-Control") == "public, max-age=1800", "\(name)")
            #expect(fetcher.calls.count == 1, "\(name)")
            if key == "/movie/5" { #expect(response.text == ScriptedUpstream.movieDetails(id: 5)) }
        }
    }

    @Test func manyDroppedEntriesAreLoggedTenByNameThenCounted() async throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let clock = ManualClock()
        let page = Data(ScriptedUpstream.moviePage.utf8).base64EncodedString()
        let entries = (1...13).map {
            #"{"key":"/movie/\#($0)","status":200,"storedAt":\#(clock.now()),"lifetime":1800,"body":"\#(page)"}"#
        }
        try
            (#"{"format":"amodb-proxy-cache-snapshot","version":1,"writtenAt":0,"entries":["#
            + entries.joined(separator: ",") + "]}")
            .write(toFile: path, atomically: true, encoding: .utf8)
        let logs = LogCapture()
        try await withServer(try proxy(ScriptedUpstream(), clock: clock, snapshot: path, logs: logs)) { proxy in
            #expect(proxy.proxy.cache.usage.entries == 0)
            #expect(logs.all.filter { $0.contains("cache snapshot entry dropped") }.count == 10)
            #expect(
                logs.all.filter { $0.contains("cache snapshot entries dropped") && $0.contains(#""more":"3""#) }.count
                    == 1)
        }
    }

    @Test func aRemembered404WithinTheSettingsIsKeptAndServedWithItsRemainingLifetime() async throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let clock = ManualClock()
        let body = Data(
            #"{"status_code":404,"status_message":"The resource you requested could not be found.","success":false}"#
                .utf8
        ).base64EncodedString()
        try
            #"{"format":"amodb-proxy-cache-snapshot","version":1,"writtenAt":0,"entries":[{"key":"/movie/9","status":404,"storedAt":\#(clock.now() - 100),"lifetime":300,"body":"\#(body)"}]}"#
            .write(toFile: path, atomically: true, encoding: .utf8)
        let fetcher = ScriptedUpstream()
        try await withServer(try proxy(fetcher, clock: clock, snapshot: path)) { (proxy: ProxyHarness) async throws in
            let response = try await proxy.get("/3/movie/9")
            #expect(response.status == 404)
            #expect(response.header("Cache-Control") == "public, max-age=200")
            #expect(fetcher.calls.isEmpty)
        }
    }
}
