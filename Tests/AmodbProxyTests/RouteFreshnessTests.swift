import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

/// Each route's own lifetime: `AMODB_CACHE_TTL` for trending lists, `AMODB_MOVIE_TTL` for
/// movie details, `AMODB_CONFIGURATION_TTL` for `/configuration`; and the stale window
/// that follows it, at least as long as the lifetime.
@Suite(.timeLimit(.minutes(1)))
struct RouteFreshnessTests {
    private static let movie = ScriptedUpstream.Answer.status(200, ScriptedUpstream.movieDetails)
    private static let configuration = ScriptedUpstream.Answer.status(200, ScriptedUpstream.configuration)

    @Test func aMovieKeptForADayIsFreshAfterTwoHoursWhileATrendingListIsStale() async throws {
        let fetcher = ScriptedUpstream()
        let clock = ManualClock()
        let proxy = try ProxyHarness(
            configuration: ProxyHarness.configuration { $0.movieTTL = 86_400 }, fetcher: fetcher, clock: clock)
        try await withServer(proxy) { (_: ProxyHarness) async throws in
            fetcher.enqueue(Self.movie)
            let filled = try await proxy.get("/3/movie/550")
            #expect(filled.status == 200)
            #expect(filled.header("Cache-Control") == "public, max-age=86400")
            let list = try await proxy.get("/3/trending/movie/week")
            #expect(list.header("Cache-Control") == "public, max-age=1800", "AMODB_CACHE_TTL's default")

            clock.advance(by: 7200)
            let movie = try await proxy.get("/3/movie/550")
            #expect(movie.header("Cache-Status") == "amodb-proxy; hit; ttl=79200")
            #expect(movie.header("Cache-Control") == "public, max-age=79200")
            let trending = try await proxy.get("/3/trending/movie/week")
            #expect(trending.header("Cache-Status") == "amodb-proxy; fwd=stale; ttl=-5400")
            #expect(await eventually { fetcher.calls.count == 3 }, "the list is refreshed")
            #expect(fetcher.calls.filter { $0 == "/movie/550" }.count == 1, "the movie is not")
        }
    }

    @Test func theMovieLifetimeDefaultsToHalfAnHour() async throws {
        let fetcher = ScriptedUpstream()
        let clock = ManualClock()
        try await withServer(try ProxyHarness(fetcher: fetcher, clock: clock)) { (proxy: ProxyHarness) async throws in
            fetcher.enqueue(Self.movie)
            #expect(try await proxy.get("/3/movie/550").header("Cache-Control") == "public, max-age=1800")
            clock.advance(by: 1801)
            fetcher.enqueue(Self.movie)
            #expect(try await proxy.get("/3/movie/550").header("Cache-Status") == "amodb-proxy; fwd=stale; ttl=-1")
        }
    }

    @Test func theConfigurationIsFreshForADay() async throws {
        let fetcher = ScriptedUpstream(fallback: Self.configuration)
        let clock = ManualClock()
        try await withServer(try ProxyHarness(fetcher: fetcher, clock: clock)) { (proxy: ProxyHarness) async throws in
            let filled = try await proxy.get("/3/configuration")
            #expect(filled.status == 200)
            #expect(filled.header("Cache-Control") == "public, max-age=86400")
            clock.advance(by: 86_399)
            #expect(try await proxy.get("/3/configuration").header("Cache-Status") == "amodb-proxy; hit; ttl=1")
            #expect(fetcher.calls == ["/configuration"])
            clock.advance(by: 2)
            #expect(try await proxy.get("/3/configuration").header("Cache-Status") == "amodb-proxy; fwd=stale; ttl=-1")
            #expect(await eventually { fetcher.calls == ["/configuration", "/configuration"] })
        }
    }

    @Test func theConfigurationLifetimeIsItsOwnSetting() async throws {
        let fetcher = ScriptedUpstream(fallback: Self.configuration)
        let clock = ManualClock()
        try await withServer(
            try ProxyHarness(
                configuration: ProxyHarness.configuration { $0.configurationTTL = 600 }, fetcher: fetcher, clock: clock)
        ) { (proxy: ProxyHarness) async throws in
            #expect(try await proxy.get("/3/configuration").header("Cache-Control") == "public, max-age=600")
        }
    }

    /// With the default day of max-stale, a movie kept a day would have no stale window at
    /// all: the window is at least the route's lifetime, so the copy keeps being served
    /// when amodb fails.
    @Test func aRouteKeptForADayIsStillServedStaleWhenAmodbFails() async throws {
        let fetcher = ScriptedUpstream()
        let clock = ManualClock()
        let proxy = try ProxyHarness(
            configuration: ProxyHarness.configuration { $0.movieTTL = 86_400 }, fetcher: fetcher, clock: clock)
        try await withServer(proxy) { (_: ProxyHarness) async throws in
            fetcher.enqueue(Self.movie)
            #expect(try await proxy.get("/3/movie/550").status == 200)
            fetcher.setFallback(.status(500))
            clock.advance(by: 90_000)
            let stale = try await proxy.get("/3/movie/550")
            #expect(stale.status == 200)
            #expect(stale.text == ScriptedUpstream.movieDetails)
            #expect(stale.header("Cache-Status")?.hasPrefix("amodb-proxy; fwd=stale") == true)
            // Twice the lifetime is the oldest it is served at.
            clock.advance(by: 2 * 86_400 - 90_000)
            let gone = try await proxy.get("/3/movie/550")
            #expect(gone.status == 502)
            #expect(gone.header("Cache-Status") == "amodb-proxy; fwd=miss; fwd-status=500")
        }
    }

    @Test func maxStaleOfZeroStillMeansNeverStale() async throws {
        let fetcher = ScriptedUpstream()
        let clock = ManualClock()
        let proxy = try ProxyHarness(
            configuration: ProxyHarness.configuration {
                $0.movieTTL = 86_400
                $0.maxStaleSeconds = 0
            }, fetcher: fetcher, clock: clock)
        try await withServer(proxy) { (_: ProxyHarness) async throws in
            fetcher.enqueue(Self.movie)
            #expect(try await proxy.get("/3/movie/550").status == 200)
            fetcher.setFallback(.status(500))
            clock.advance(by: 86_401)
            #expect(try await proxy.get("/3/movie/550").status == 502)
        }
    }

    @Test func aSnapshotKeepsEachRoutesLifetime() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "amodb-snapshot-\(UUID().uuidString).json"
        ).path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let clock = ManualClock()
        func entry(_ key: String, _ body: String) -> String {
            #"{"key":"\#(key)","status":200,"storedAt":\#(clock.now() - 7200),"lifetime":86400,"body":"\#(Data(body.utf8).base64EncodedString())"}"#
        }
        try
            (#"{"format":"amodb-proxy-cache-snapshot","version":1,"writtenAt":0,"entries":["#
            + entry("/movie/550", ScriptedUpstream.movieDetails) + ","
            + entry("/configuration", ScriptedUpstream.configuration) + "]}")
            .write(toFile: path, atomically: true, encoding: .utf8)
        for movieTTL in [86_400.0, 1800] {
            let logs = LogCapture()
            var configuration = ProxyHarness.configuration()
            configuration.snapshotPath = path
            configuration.movieTTL = movieTTL
            let fetcher = ScriptedUpstream(fallback: Self.movie)
            let proxy = try ProxyHarness(
                configuration: configuration, fetcher: fetcher, clock: clock,
                logger: ProxyLogger(minimumLevel: .debug, sink: logs.sink))
            // Started, then stopped before the snapshot is written again.
            try await withServer(proxy) { (proxy: ProxyHarness) async throws in
                #expect(
                    proxy.proxy.cache.entry(for: "/configuration") != nil, "a day is AMODB_CONFIGURATION_TTL's default")
                if movieTTL == 86_400 {
                    #expect(proxy.proxy.cache.usage.entries == 2)
                    #expect(try await proxy.get("/3/movie/550").header("Cache-Status") == "amodb-proxy; hit; ttl=79200")
                } else {
                    #expect(proxy.proxy.cache.usage.entries == 1)
                    #expect(logs.all.contains { $0.contains("lifetime longer than AMODB_MOVIE_TTL") })
                }
            }
        }
    }
}
