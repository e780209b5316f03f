import AmodbModels
import AmodbPlanner
import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

/// A forwarded request's access-log line names the cache key it was answered from (the
/// canonical path and query, language resolved), never the query the client sent; and
/// the planner's reader reads the server's own lines back into those requests.
@Suite(.timeLimit(.minutes(1)))
struct AccessLogKeyTests {
    @Test(arguments: LogFormat.allCases)
    func forwardedLinesCarryTheCacheKeyAndTheReaderReadsThemBack(format: LogFormat) async throws {
        let setup = try SandboxedProxy { $0.logFormat = format }
        try await withServer(setup) { setup in
            let key = ProxyHarness.key
            #expect(
                try await setup.harness.get(
                    "/3/movie/550?api_key=\(key)&language=de&append_to_response=credits,credits&utm_source=x"
                ).status == 200)
            #expect(try await setup.harness.get("/3/movie/550?language=de-AT").status == 200)  // answered in English
            #expect(try await setup.harness.get("/3/trending/movie/week?page=1").status == 200)
            #expect(try await setup.harness.get("/3/trending/movie/week?page=0").status == 400)
            #expect(try await setup.harness.get("/healthz").status == 200)
            #expect(try await setup.harness.get("/3/movie/popular").status == 404)
            // One head twice on a connection: the second line copies the fields rendered for the first.
            let head = "GET /3/trending/tv/day?language=fr&api_key=\(key) HTTP/1.1\r\nHost: a\r\n\r\n"
            let repeated = try await setup.harness.exchange(Array((head + head).utf8), expecting: 2)
            #expect(repeated.responses.map(\.status) == [200, 200])
            #expect(await eventually { setup.accessLog.all.count == 8 })

            let lines = setup.accessLog.all
            let expectedKeys = [
                "/movie/550?append_to_response=credits&language=de-DE", "/movie/550", "/trending/movie/week",
                "/trending/tv/day?language=fr-FR", "/trending/tv/day?language=fr-FR",
            ]
            for line in lines {
                #expect(!line.contains(key))
                #expect(!line.contains("api_key") && !line.contains("utm_source"))
            }
            if format == .json {
                let objects = try lines.map {
                    try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
                }
                #expect(
                    objects.map { $0["key"] as? String } == [
                        expectedKeys[0], expectedKeys[1], expectedKeys[2], nil, nil, nil, expectedKeys[3],
                        expectedKeys[4],
                    ])
            } else {
                #expect(lines[0].contains(#" key="/movie/550?append_to_response=credits&language=de-DE" status=200 "#))
                #expect(lines[2].contains(" key=/trending/movie/week status=200 "))
            }

            var reader = AccessLogReader()
            reader.feed(Array(lines.joined(separator: "\n").utf8))
            let contents = reader.finish()
            #expect(contents.requests.map(\.request.pathAndQuery) == expectedKeys)
            #expect(contents.linesNotForwarded == 3, "the 400, /healthz and the unmatched path")
            #expect(contents.linesBeforeKeys == 0 && contents.linesUnreadable == 0)
        }
    }
}
