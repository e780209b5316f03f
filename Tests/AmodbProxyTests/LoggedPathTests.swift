import AmodbTestSupport
import Foundation
import Testing

@testable import AmodbProxy

struct LoggedPathTests {
    @Test(arguments: [
        ("/3/movie/popular", "/3/movie/popular"),
        ("/3/movie/popular?api_key=test-secret&page=2", "/3/movie/popular"),
        ("/favicon.ico?", "/favicon.ico"),
        ("/a%20b/%2e%2E", "/a%20b/%2e%2E"),  // the client's own encoding, as sent
        ("http://example.com/x?y", "http://example.com/x"),
        ("/" + String(repeating: "a", count: 1000), "/" + String(repeating: "a", count: 255)),
    ])
    func aTargetIsLoggedWithoutItsQueryAndCut(_ target: String, _ logged: String) {
        #expect(LoggedPath.of(target: target) == logged)
    }

    @Test(
        arguments: [
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
