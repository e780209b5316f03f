import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

@Suite(.timeLimit(.minutes(1)))
struct NegativeCachingTests {
    @Test func remembersAmodbs404ForTheNegativeLifetime() async throws {
        let fetcher = ScriptedUpstream(fallback: .status(404, #"{"status_code":34,"status_message":"nope"}"#))
        let clock = ManualClock()
        let proxy = try ProxyHarness(fetcher: fetcher, clock: clock)
        try await withServer(proxy) { _ in
            let first = try await proxy.get("/3/movie/9999999")
            #expect(first.status == 404)
            #expect(first.header("Cache-Status") == "amodb-proxy; fwd=miss; fwd-status=404; stored")
            clock.advance(by: 200)
            let second = try await proxy.get("/3/movie/9999999")
            #expect(second.status == 404)
            #expect(second.header("Cache-Status") == "amodb-proxy; hit; ttl=100")
            #expect(second.header("Cache-Control") == "public, max-age=100")
            #expect(second.text.contains("status_message"))
            #expect(fetcher.calls.count == 1)

            clock.advance(by: 101)
            #expect(try await proxy.get("/3/movie/9999999").status == 404)
            #expect(fetcher.calls.count == 2, "a 404 is not served stale")
        }
    }
}
