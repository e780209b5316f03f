import AmodbTestSupport
import Foundation
import Testing

@testable import AmodbProxy

@Suite(.timeLimit(.minutes(1)))
struct CachingForwarderTests {
    @Test func storesTheFirstAnswerAndServesItAfterwards() async throws {
        let fetcher = ScriptedUpstream()
        let harness = try ProxyHarness(fetcher: fetcher)
        try await withServer(harness) { _ in
            let first = try await harness.get("/3/trending/movie/week")
            #expect(first.status == 200)
            #expect(first.header("Cache-Status")?.hasPrefix("amodb-proxy; fwd=miss") == true)
            #expect(first.header("Cache-Status")?.contains("stored") == true)
            #expect(first.header("Content-Type") == "application/json;charset=utf-8")
            #expect(first.text == ScriptedUpstream.moviePage)

            let second = try await harness.get("/3/trending/movie/week")
            #expect(second.status == 200)
            #expect(second.header("Cache-Status")?.hasPrefix("amodb-proxy; hit") == true)
            #expect(second.body == first.body)
            #expect(second.header("Cache-Control") == "public, max-age=\(1800 - Int(second.header("Age") ?? "0")!)")
            #expect(fetcher.calls == ["/trending/movie/week"])
        }
    }

    @Test func reportsAgeAndRemainingFreshness() async throws {
        let fetcher = ScriptedUpstream()
        let clock = ManualClock()
        let harness = try ProxyHarness(fetcher: fetcher, clock: clock)
        try await withServer(harness) { _ in
            _ = try await harness.get("/3/trending/tv/day")
            clock.advance(by: 600)
            let aged = try await harness.get("/3/trending/tv/day")
            #expect(aged.header("Age") == "600")
            #expect(aged.header("Cache-Control") == "public, max-age=1200")
            #expect(aged.header("Cache-Status") == "amodb-proxy; hit; ttl=1200")
            #expect(fetcher.calls.count == 1)
        }
    }

    @Test func sharesOneEntryWhateverTheParameterOrderCaseOrExtras() async throws {
        let fetcher = ScriptedUpstream(fallback: .status(200, ScriptedUpstream.movieDetails))
        let harness = try ProxyHarness(fetcher: fetcher)
        try await withServer(harness) { _ async throws in
            for target in [
                "/3/movie/550?language=de-DE&append_to_response=ratings,credits",
                "/3/movie/550?append_to_response=credits,ratings&language=de-de",
                "/3/movie/550?api_key=someone-elses&append_to_response=credits,ratings,credits&language=DE-de&utm=1",
            ] {
                #expect(try await harness.get(target).status == 200)
            }
            #expect(fetcher.calls == ["/movie/550?append_to_response=credits,ratings&language=de-DE"])
        }
    }

    @Test func namesAmodbDoesNotKnowAreDroppedAndNeverForwarded() async throws {
        let fetcher = ScriptedUpstream(fallback: .status(200, ScriptedUpstream.movieDetails))
        let harness = try ProxyHarness(fetcher: fetcher)
        try await withServer(harness) { _ async throws in
            for target in [
                "/3/movie/550?append_to_response=credits,account_states",
                "/3/movie/550?append_to_response=credits,CREDITS,%20credits%20,../../x,%E2%80%8Bcredits",
                "/3/movie/550?append_to_response=casts,credits,trailers,",
            ] {
                #expect(try await harness.get(target).status == 200, "\(target)")
            }
            for target in [
                "/3/movie/550?append_to_response=secrets", "/3/movie/550?append_to_response=",
                "/3/movie/550?append_to_response=,%20,",
            ] {
                #expect(try await harness.get(target).status == 200, "\(target)")
            }
            #expect(fetcher.calls == ["/movie/550?append_to_response=credits", "/movie/550"])
        }
    }

    @Test func makesOneUpstreamCallForManyConcurrentRequests() async throws {
        let fetcher = ScriptedUpstream()
        fetcher.hold()  // the one call stays in flight until all fifty have asked
        let harness = try ProxyHarness(fetcher: fetcher)
        try await withServer(harness) { _ in
            let statuses = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                for _ in 0..<50 {
                    group.addTask {
                        let response = try await harness.get("/3/trending/all/day")
                        return (response.status, response.header("Cache-Status"))
                    }
                }
                #expect(await eventually { fetcher.heldCount == 1 && harness.proxy.statistics.value(.collapsed) == 49 })
                fetcher.release()
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.count == 50)
            #expect(statuses.allSatisfy { $0.0 == 200 })
            #expect(statuses.filter { $0.1 == "amodb-proxy; fwd=miss; fwd-status=200; stored; collapsed" }.count == 49)
            #expect(statuses.filter { $0.1 == "amodb-proxy; fwd=miss; fwd-status=200; stored" }.count == 1)
            #expect(fetcher.calls.count == 1)
        }
    }

    @Test func neverSendsUnknownRoutesOrInvalidParametersUpstream() async throws {
        let fetcher = ScriptedUpstream()
        let harness = try ProxyHarness(fetcher: fetcher)
        try await withServer(harness) { _ in
            for target in [
                "/3/movie/popular", "/3/search/movie?query=x", "/movie/550", "/3/trending/movie/month", "/3/movie/0",
                "/3/movie/550/credits", "/",
            ] {
                let response = try await harness.get(target)
                #expect(response.status == 404, "\(target)")
                #expect(response.text.contains("status_message"))
            }
            for target in [
                "/3/trending/movie/week?page=0", "/3/trending/movie/week?page=501", "/3/trending/movie/week?page=abc",
                "/3/movie/550?language=not_a_tag", "/3/movie/550?append_to_response=credits&append_to_response=images",
                "/3/movie/550?language=en&language=de",
            ] {
                let response = try await harness.get(target)
                #expect(response.status == 400, "\(target)")
                #expect(response.text.contains("Invalid parameter"))
                #expect(response.header("Cache-Control") == "no-store")
            }
            #expect(fetcher.calls.isEmpty)
        }
    }

    @Test func refusesOtherMethodsWithAllow() async throws {
        let fetcher = ScriptedUpstream()
        let harness = try ProxyHarness(fetcher: fetcher)
        try await withServer(harness) { _ in
            let response = try await harness.get("/3/movie/550", method: "DELETE")
            #expect(response.status == 405)
            #expect(response.header("Allow") == "GET, HEAD")
            let head = try await harness.get("/3/trending/movie/week", method: "HEAD")
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
            #expect(Int(head.header("Content-Length") ?? "") == ScriptedUpstream.moviePage.utf8.count)
            #expect(fetcher.calls.count == 1)
        }
    }

    @Test func answersHealthz() async throws {
        let harness = try ProxyHarness(fetcher: ScriptedUpstream())
        try await withServer(harness) { _ in
            let response = try await harness.get("/healthz")
            #expect(response.status == 200)
            #expect(response.text == #"{"status":"ok"}"#)
        }
    }

    struct Mapping: Sendable, CustomTestStringConvertible {
        let name: String
        let answer: ScriptedUpstream.Answer
        let status: Int
        var testDescription: String { name }
    }

    static let mappings: [Mapping] = [
        Mapping(name: "401 key rejected → 502", answer: .status(401, ScriptedUpstream.keyRejected), status: 502),
        Mapping(name: "402 plan expired → 502", answer: .status(402, ScriptedUpstream.keyRejected), status: 502),
        Mapping(name: "500 → 502", answer: .status(500), status: 502),
        Mapping(name: "503 → 502", answer: .status(503), status: 502),
        Mapping(name: "504 → 504", answer: .status(504), status: 504),
        Mapping(name: "timeout → 504", answer: .failure(.timedOut), status: 504),
        Mapping(name: "unreachable → 502", answer: .failure(.unreachable), status: 502),
        Mapping(
            name: "truncated JSON → 502", answer: .status(200, String(ScriptedUpstream.moviePage.prefix(40))),
            status: 502),
        Mapping(name: "wrong shape → 502", answer: .status(200, #"{"hello":"world"}"#), status: 502),
        Mapping(name: "redirect → 502", answer: .status(302), status: 502),
        Mapping(
            name: "body holding the key → 502",
            answer: .status(
                200, ScriptedUpstream.moviePage.replacingOccurrences(of: "Fight Club", with: ProxyHarness.key)),
            status: 502),
    ]

    @Test(arguments: mappings)
    func mapsUpstreamFailuresAndStoresNothing(_ mapping: Mapping) async throws {
        let fetcher = ScriptedUpstream(fallback: mapping.answer)
        let harness = try ProxyHarness(fetcher: fetcher)
        try await withServer(harness) { _ in
            let response = try await harness.get("/3/trending/movie/week")
            #expect(response.status == mapping.status)
            let body = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
            #expect((body?["status_message"] as? String)?.isEmpty == false)
            #expect(response.header("Cache-Control") == "no-store")
            #expect(!response.text.contains(ProxyHarness.key))
            #expect(!response.headers.contains { $0.value.contains(ProxyHarness.key) })

            _ = try await harness.get("/3/trending/movie/week")
            #expect(fetcher.calls.count == 2, "a failure must not be stored")
            #expect(harness.proxy.cache.usage.entries == 0)
        }
    }

    @Test func retriesRateLimitedCallsAsAmodbAsks() async throws {
        let fetcher = ScriptedUpstream()
        fetcher.enqueue(
            .status(429, "", headers: ["retry-after": "0"]), .status(429, "", headers: ["retry-after": "0"]))
        let harness = try ProxyHarness(fetcher: fetcher)
        try await withServer(harness) { _ in
            let response = try await harness.get("/3/trending/movie/week")
            #expect(response.status == 200)
            #expect(fetcher.calls.count == 3)
        }
    }

    @Test func answers503WithRetryAfterWhenStillRateLimited() async throws {
        let fetcher = ScriptedUpstream(fallback: .status(429, "", headers: ["retry-after": "1"]))
        let harness = try ProxyHarness(fetcher: fetcher)
        try await withServer(harness) { _ in
            let response = try await harness.get("/3/trending/movie/week")
            #expect(response.status == 503)
            #expect(response.header("Retry-After") == "1")
            #expect(fetcher.calls.count == 3, "the first call and two retries")
        }
    }

    @Test func passesOnARetryAfterLongerThanTheCapWithoutWaiting() async throws {
        let fetcher = ScriptedUpstream(fallback: .status(429, "", headers: ["retry-after": "120"]))
        let harness = try ProxyHarness(fetcher: fetcher)
        try await withServer(harness) { _ in
            let response = try await harness.get("/3/trending/movie/week")
            #expect(response.status == 503)
            #expect(response.header("Retry-After") == "120")
            #expect(fetcher.calls.count == 1)
        }
    }

    @Test func answers304WhenTheClientHasTheSameBody() async throws {
        let harness = try ProxyHarness(fetcher: ScriptedUpstream())
        try await withServer(harness) { _ in
            let first = try await harness.get("/3/trending/movie/week")
            let etag = try #require(first.header("ETag"))
            let again = try await harness.get("/3/trending/movie/week", headers: ["If-None-Match": etag])
            #expect(again.status == 304)
            #expect(again.body.isEmpty)
            #expect(again.header("ETag") == etag)
            let other = try await harness.get("/3/trending/movie/week", headers: ["If-None-Match": "\"other\""])
            #expect(other.status == 200)
        }
    }
}
