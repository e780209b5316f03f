import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

private let movieRoute = "/3/movie/{movie_id}"

@Suite(.timeLimit(.minutes(1)))
struct SchemaMismatchTests {
    private func mismatches(_ harness: ProxyHarness, route: String = movieRoute) async throws -> Double {
        try PrometheusSamples(try await harness.get("/metrics").text).value(
            "amodb_proxy_schema_mismatch_total", ["route": route])
    }

    @Test(arguments: [
        #"{"id":550,"title":"Fight Club","ratings":{"imdb":8.8,"tmdb":{"value":8.4,"votes":30000}}}"#,
        #"{"id":550,"title":"Fight Club","vote_average":"8.4","genres":[{"id":"18","name":"Drama"}]}"#,
        #"{"id":550,"title":"Fight Club","credits":{"cast":{"0":"Brad Pitt"}}}"#,
    ])
    func aMovieTheModelsCannotReadIsStoredAndServedByteForByte(_ body: String) async throws {
        let fetcher = ScriptedUpstream(fallback: .status(200, body))
        try await withServer(try ProxyHarness(fetcher: fetcher)) { (harness: ProxyHarness) async throws in
            let first = try await harness.get("/3/movie/550")
            #expect(first.status == 200)
            #expect(first.text == body)
            let second = try await harness.get("/3/movie/550")
            #expect(second.header("Cache-Status")?.hasPrefix("amodb-proxy; hit") == true)
            #expect(second.text == body)
            #expect(fetcher.calls.count == 1)
            #expect(try await mismatches(harness) == 1)
        }
    }

    @Test func aMismatchIsLoggedOncePerRoutePerHourNamingTheFieldNeverTheValue() async throws {
        let fetcher = ScriptedUpstream()
        let clock = ManualClock()
        let logs = LogCapture()
        let harness = try ProxyHarness(
            fetcher: fetcher, clock: clock, logger: ProxyLogger(minimumLevel: .debug, sink: logs.sink))
        try await withServer(harness) { (harness: ProxyHarness) async throws in
            let warnings = { logs.all.filter { $0.contains("does not decode as the shared models") } }
            let page =
                #"{"page":1,"results":[{"id":1,"media_type":"movie","title":"A"},{"id":2,"media_type":"movie","title":"B","vote_average":"nine point one"}]}"#
            fetcher.enqueue(.status(200, page))
            #expect(try await harness.get("/3/trending/movie/week").text == page)
            #expect(warnings().count == 1)
            #expect(warnings().first?.contains(#""field":"results[1].vote_average""#) == true)
            #expect(warnings().first?.contains("nine point one") == false)

            fetcher.enqueue(.status(200, page))
            #expect(try await harness.get("/3/trending/tv/week").status == 200)
            #expect(warnings().count == 1, "a second mismatch on the route within the hour is counted, not logged")
            #expect(try await mismatches(harness, route: "/3/trending/{media_type}/{time_window}") == 2)

            fetcher.enqueue(.status(200, #"{"id":550,"title":17}"#))
            #expect(try await harness.get("/3/movie/550").status == 200)
            #expect(warnings().count == 2, "another route has its own hour")
            #expect(warnings().last?.contains(#""field":"title""#) == true)

            clock.advance(by: 3600)
            fetcher.enqueue(.status(200, page))
            #expect(try await harness.get("/3/trending/all/week").status == 200)
            #expect(warnings().count == 3)
            #expect(try await mismatches(harness, route: "/3/trending/{media_type}/{time_window}") == 3)
        }
    }

    @Test func aConfigurationTheModelsCannotReadIsCountedUnderItsRoute() async throws {
        let body = #"{"images":{"poster_sizes":["w92"]},"change_keys":[]}"#
        let fetcher = ScriptedUpstream(fallback: .status(200, body))
        try await withServer(try ProxyHarness(fetcher: fetcher)) { (harness: ProxyHarness) async throws in
            let response = try await harness.get("/3/configuration")
            #expect(response.status == 200)
            #expect(response.text == body)
            #expect(try await mismatches(harness, route: "/3/configuration") == 1)
            #expect(try await mismatches(harness) == 0)
        }
    }

    @Test func anAnswerTheModelsReadIsNotCounted() async throws {
        let fetcher = ScriptedUpstream(fallback: .status(200, ScriptedUpstream.movieDetails))
        try await withServer(try ProxyHarness(fetcher: fetcher)) { (harness: ProxyHarness) async throws in
            #expect(try await harness.get("/3/movie/550").status == 200)
            #expect(try await mismatches(harness) == 0)
        }
    }

    @Test func aMovieOtherThanTheOneAskedForIsRefusedAndNotStored() async throws {
        let fetcher = ScriptedUpstream(fallback: .status(200, #"{"id":550,"title":"Fight Club"}"#))
        try await withServer(try ProxyHarness(fetcher: fetcher)) { (harness: ProxyHarness) async throws in
            let response = try await harness.get("/3/movie/5")
            #expect(response.status == 502)
            #expect(response.text.contains("status_message"))
            #expect(harness.proxy.cache.usage.entries == 0)
        }
    }
}
