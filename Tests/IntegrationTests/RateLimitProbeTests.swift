import AmodbProxy
import AmodbTestSupport
import Testing

/// When amodb says 429 to everything, the pause it asks for ends with one call, not with
/// every miss that waited: 20 clients asking for 5 paths cost at most 3 calls in the 4 s
/// after the first 429.
@Suite(.timeLimit(.minutes(1)))
struct RateLimitProbeTests {
    static let rateLimited = ScriptedUpstream.Answer.response(
        UpstreamResponse(
            status: 429, headers: ["retry-after": "2"],
            body: Array(#"{"success":false,"status_code":25,"status_message":"slow down"}"#.utf8)))

    @Test func aPauseEndsWithOneProbeNotAStampede() async throws {
        let fetcher = ScriptedUpstream(fallback: Self.rateLimited)
        // amodb takes a moment to answer, as over a network: without a probe, every miss
        // waiting would be granted before the first answer after the pause comes back.
        fetcher.setDelay(milliseconds: 50)
        try await withServer(try ProxyHarness(.live, fetcher: fetcher)) { harness in
            let statuses = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                for client in 0..<20 {
                    group.addTask {
                        let answer = try await harness.get("/3/movie/\(550 + client % 5)")
                        return (answer.status, answer.header("Retry-After"))
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let first = try #require(fetcher.callInstants.first)
            // The probe when the pause ends (on a loaded machine, maybe late), then long enough
            // for any stampede to have happened.
            #expect(await eventually { fetcher.callInstants.contains { $0 > first + .milliseconds(1_900) } })
            try await Task.sleep(until: first + .seconds(5))
            let instants = fetcher.callInstants
            // The calls made before the first 429 came back went out together, at once.
            let after = instants.filter { $0 > first + .milliseconds(150) && $0 <= first + .seconds(4) }
            #expect(after.count <= 3, "\(after.count) calls in the 4 s after the first 429")
            #expect(statuses.count == 20)
            #expect(statuses.allSatisfy { ($0.0 == 503 || $0.0 == 429) && $0.1 != nil }, "\(statuses)")
        }
    }
}
