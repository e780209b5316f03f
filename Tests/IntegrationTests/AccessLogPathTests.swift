import AmodbTestSupport
import Foundation
import Testing

@testable import AmodbProxy

@Suite(.timeLimit(.minutes(1)))
struct AccessLogPathTests {
    private func lines(_ capture: LogCapture) throws -> [[String: Any]] {
        try capture.all.map { try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
    }

    @Test func unmatchedAndRefusedRequestsLogTheirPathMatchedOnesTheirTemplate() async throws {
        let accessLog = LogCapture()
        let harness = try ProxyHarness(.live, fetcher: ScriptedUpstream(), accessLog: accessLog)
        try await withServer(harness) { harness throws in
            #expect(try await harness.get("/3/movie/popular?api_key=\(ProxyHarness.key)").status == 404)
            #expect(try await harness.get("/wp-login.php").status == 404)
            #expect(try await harness.get("/3/trending/movie/week?page=x&api_key=\(ProxyHarness.key)").status == 400)
            // Refused before routing: no Host.
            let refused = try await harness.exchange(
                Array("GET /3/movie/550?api_key=\(ProxyHarness.key) HTTP/1.1\r\n\r\n".utf8), expecting: 1)
            #expect(refused.responses.first?.status == 400)
            #expect(await eventually { accessLog.all.count == 4 })

            let objects = try lines(accessLog)
            #expect(
                objects.map { $0["route"] as? String } == [
                    "unmatched", "unmatched", "/3/trending/{media_type}/{time_window}", "invalid",
                ])
            #expect(
                objects.map { $0["path"] as? String } == ["/3/movie/popular", "/wp-login.php", nil, "/3/movie/550"])
            for line in accessLog.all {
                #expect(!line.contains(ProxyHarness.key))
                #expect(!line.contains("api_key"))
            }
        }
    }
}
