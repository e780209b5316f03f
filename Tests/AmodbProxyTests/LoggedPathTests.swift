@testable import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

struct LoggedPathTests {
    @Test(arguments: [
        ("/3/movie/popular", "/3/movie/popular"),
        ("/3/movie/popular?api_key=test-secret&page=2", "/3/movie/popular"),
        ("/favicon.ico?", "/favicon.ico"),
        ("/a%20b/%2e%2E", "/a%20b/%2e%2E"),   // the client's own encoding, as sent
        ("http://example.com/x?y", "http://example.com/x"),
        ("/" + String(repeating: "a", count: 1000), "/" + String(repeating: "a", count: 255)),
    ])
    func aTargetIsLoggedWithoutItsQueryAndCut(_ target: String, _ logged: String) {
        #expect(LoggedPath.of(target: target) == logged)
    }

    @Test(arguments: [
        ("GET /3/movie/550?api_key=k HTTP/1.1\r\n\r\n", "/3/movie/550"),
        ("\r\n\r\nGET /x HTTP/1.1\r\nHost: a\r\n\r\n", "/x"),
        ("GET /\u{1}\"\\\u{7F}\u{FF} HTTP/1.1\r\n", "/%01%22%5C%7F%C3%BF"),
        ("GET /only-a-target-so-far", "/only-a-target-so-far"),
        ("GARBAGE\r\n\r\n", nil),
        ("GET  HTTP/1.1\r\n", nil),
        ("", nil),
    ] as [(String, String?)])
    func aRefusedHeadIsLoggedByTheTargetInItsRequestLine(_ head: String, _ logged: String?) {
        #expect(LoggedPath.of(requestHead: ArraySlice(Array(head.utf8))) == logged)
    }

    @Test func anEscapeIsNeverCutInHalf() {
        let logged = LoggedPath.of(target: "/" + String(repeating: "a", count: 253) + "\u{1}")
        #expect(logged.utf8.count == 254)
        #expect(!logged.contains("%"))
    }
}

@Suite(.timeLimit(.minutes(1)))
struct AccessLogPathTests {
    private func lines(_ capture: LogCapture) throws -> [[String: Any]] {
        try capture.all.map { try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
    }

    @Test func unmatchedAndRefusedRequestsLogTheirPathMatchedOnesTheirTemplate() async throws {
        let accessLog = LogCapture()
        let harness = try ProxyHarness(fetcher: ScriptedUpstream(), accessLog: accessLog)
        try await withServer(harness) { harness throws in
            #expect(try await harness.get("/3/movie/popular?api_key=\(ProxyHarness.key)").status == 404)
            #expect(try await harness.get("/wp-login.php").status == 404)
            #expect(try await harness.get("/3/trending/movie/week?page=x&api_key=\(ProxyHarness.key)").status == 400)
            // Refused before routing: no Host.
            let refused = try await harness.exchange(Array("GET /3/movie/550?api_key=\(ProxyHarness.key) HTTP/1.1\r\n\r\n".utf8), expecting: 1)
            #expect(refused.responses.first?.status == 400)
            #expect(await eventually { accessLog.all.count == 4 })

            let objects = try lines(accessLog)
            #expect(objects.map { $0["route"] as? String } == ["unmatched", "unmatched", "/3/trending/{media_type}/{time_window}", "invalid"])
            #expect(objects.map { $0["path"] as? String } == ["/3/movie/popular", "/wp-login.php", nil, "/3/movie/550"])
            for line in accessLog.all {
                #expect(!line.contains(ProxyHarness.key))
                #expect(!line.contains("api_key"))
            }
        }
    }
}
