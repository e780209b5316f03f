import AmodbProxy
import AmodbTestSupport
import Testing

/// Clients waiting on one fetch share its 429 retries: amodb sees one call plus at most
/// two retries, however many clients wait.
@Suite(.timeLimit(.minutes(1)))
struct RateLimitRetrySharingTests {
    static let rateLimited = ScriptedUpstream.Answer.response(
        UpstreamResponse(
            status: 429, headers: ["retry-after": "0"],
            body: Array(#"{"success":false,"status_code":25,"status_message":"slow down"}"#.utf8)))
    static let page = ScriptedUpstream.Answer.response(
        UpstreamResponse(status: 200, body: Array(ScriptedUpstream.moviePage.utf8)))

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let answers: [ScriptedUpstream.Answer]
        let calls: Int
        let status: Int
        var testDescription: String { name }
    }

    static let cases = [
        Case(
            name: "429 three times: one call and two retries, all clients get 503",
            answers: [rateLimited, rateLimited, rateLimited], calls: 3, status: 503),
        Case(
            name: "429 once, then the page: one retry, all clients get 200", answers: [rateLimited, page], calls: 2,
            status: 200),
    ]

    @Test("Waiting clients share the retries after amodb's 429", arguments: cases)
    func waitingClientsShareTheRetries(_ scenario: Case) async throws {
        let fetcher = ScriptedUpstream(fallback: Self.rateLimited)
        for answer in scenario.answers { fetcher.enqueue(answer) }
        fetcher.hold()
        let harness = try ProxyHarness(.live, fetcher: fetcher)
        try await withServer(harness) { harness in
            let clients = 8
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<clients {
                    group.addTask { try await harness.get("/3/trending/movie/day").status }
                }
                // Every client has joined the one fetch before amodb answers.
                #expect(
                    try await eventually {
                        guard fetcher.heldCount == 1 else { return false }
                        return try await harness.metrics().value(
                            "amodb_proxy_cache_events_total", ["event": "collapsed"]) == Double(clients - 1)
                    })
                fetcher.release()
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses == Array(repeating: scenario.status, count: clients))
            #expect(fetcher.calls == Array(repeating: "/trending/movie/day", count: scenario.calls))
        }
    }
}
