import AmodbProxy
import AmodbTestSupport
import Testing

/// `ETag` and `If-None-Match` (RFC 9110 §13.1.2) beyond a fresh GET: on a stale answer,
/// on HEAD, and on a remembered 404 (which has no validator, so it is never a 304).
@Suite(.timeLimit(.minutes(1)))
struct ConditionalRequestTests {
    @Test func aStaleAnswerKeepsItsETagAndAMatchIs304() async throws {
        let clock = ManualClock()
        let fetcher = ScriptedUpstream()
        let harness = try ProxyHarness(.live, fetcher: fetcher, clock: clock)
        try await withServer(harness) { harness in
            let fresh = try await harness.get("/3/trending/movie/day")
            let etag = try #require(fresh.header("ETag"))
            clock.advance(by: 1801)
            fetcher.hold()  // the background refresh stays in flight: the entry stays stale

            let notModified = try await harness.get("/3/trending/movie/day", headers: ["If-None-Match": etag])
            #expect(notModified.status == 304)
            #expect(notModified.body.isEmpty)
            #expect(notModified.header("ETag") == etag)
            #expect(notModified.header("Cache-Status") == "amodb-proxy; fwd=stale; ttl=-1")
            let other = try await harness.get("/3/trending/movie/day", headers: ["If-None-Match": #""not-it""#])
            #expect(other.status == 200)
            #expect(other.body == fresh.body)
            #expect(other.header("Cache-Status") == "amodb-proxy; fwd=stale; ttl=-1")
            fetcher.release()
        }
    }

    @Test func headCarriesTheETagAndAMatchIs304() async throws {
        let harness = try ProxyHarness(.live, fetcher: ScriptedUpstream(), clock: ManualClock())
        try await withServer(harness) { harness in
            let get = try await harness.get("/3/trending/movie/day")
            let etag = try #require(get.header("ETag"))
            let head = try await harness.get("/3/trending/movie/day", method: "HEAD")
            #expect(head.status == 200)
            #expect(head.header("ETag") == etag)
            #expect(head.header("Content-Length") == String(get.body.count))
            let notModified = try await harness.get(
                "/3/trending/movie/day", headers: ["If-None-Match": "W/" + etag], method: "HEAD")
            #expect(notModified.status == 304)
            #expect(notModified.header("ETag") == etag)
        }
    }

    @Test("A remembered 404 has no ETag and is never a 304", arguments: [#"*"#, #""anything""#])
    func aRememberedNotFoundIsNeverNotModified(ifNoneMatch: String) async throws {
        let fetcher = ScriptedUpstream(
            fallback: .response(
                UpstreamResponse(
                    status: 404, body: Array(#"{"success":false,"status_code":34,"status_message":"not found"}"#.utf8)))
        )
        let harness = try ProxyHarness(.live, fetcher: fetcher, clock: ManualClock())
        try await withServer(harness) { harness in
            let first = try await harness.get("/3/movie/987654321")
            #expect(first.status == 404)
            #expect(first.header("ETag") == nil)
            let again = try await harness.get("/3/movie/987654321", headers: ["If-None-Match": ifNoneMatch])
            #expect(again.status == 404)
            #expect(again.header("ETag") == nil)
            #expect(
                again.header("Cache-Status")?.hasPrefix("amodb-proxy; hit") == true, "answered from the remembered 404")
            #expect(again.text.contains("status_message"))
            #expect(fetcher.calls.count == 1)
        }
    }
}
