import AmodbModels
import AmodbProxy
import AmodbSandbox
import Testing

@Suite struct RateLimitTests {
    @Test func successCarriesLimitHeadersInBothSpellings() async {
        let response = await get(AmodbSandbox(), "/3/trending/movie/week")
        #expect(response.status == 200)
        #expect(response.headers["X-RateLimit-Limit"] == "40")
        #expect(response.headers["X-RateLimit-Remaining"] == "39")
        #expect(response.headers["X-RateLimit-Reset"] == "60")
        #expect(response.headers["RateLimit-Limit"] == "40")
        #expect(response.headers["RateLimit-Remaining"] == "39")
        #expect(response.headers["RateLimit-Reset"] == "60")
    }

    @Test func allowsTheLimitThenRefusesWith429AndRetryAfter() async throws {
        let clock = ManualClock()
        let sandbox = AmodbSandbox(configuration: .init(requestsPerMinute: 3, now: { clock.now }))
        for expectedRemaining in [2, 1, 0] {
            let response = await get(sandbox, "/3/movie/550")
            #expect(response.status == 200)
            #expect(response.headers["X-RateLimit-Remaining"] == String(expectedRemaining))
        }
        let refused = await get(sandbox, "/3/movie/550")
        #expect(refused.status == 429)
        #expect(refused.headers["Retry-After"] == "60")
        #expect(refused.headers["X-RateLimit-Remaining"] == "0")
        #expect(refused.headers["RateLimit-Remaining"] == "0")
        #expect(refused.headers["X-RateLimit-Limit"] == "3")
        let error = try decode(AmodbErrorBody.self, refused)
        #expect(error.statusCode == 25)
        #expect(error.statusMessage == "Your request count (4) is over the allowed limit of (3).")
    }

    @Test func windowSlidesAsOldCallsAge() async {
        let clock = ManualClock()
        let sandbox = AmodbSandbox(configuration: .init(requestsPerMinute: 3, now: { clock.now }))
        for _ in 0..<3 {
            #expect(await get(sandbox, "/3/movie/550").status == 200)  // at 0 s, 20 s, 40 s
            clock.advance(by: .seconds(20))
        }
        clock.advance(by: .seconds(-10))  // 50 s
        let early = await get(sandbox, "/3/movie/550")
        #expect(early.status == 429)
        #expect(early.headers["Retry-After"] == "10")  // the 0 s call leaves at 60 s
        clock.advance(by: .seconds(10))  // 60 s
        let admitted = await get(sandbox, "/3/movie/550")
        #expect(admitted.status == 200)
        #expect(admitted.headers["X-RateLimit-Remaining"] == "0")
        #expect(admitted.headers["X-RateLimit-Reset"] == "20")  // the 20 s call leaves at 80 s
        clock.advance(by: .milliseconds(500))
        let again = await get(sandbox, "/3/movie/550")
        #expect(again.status == 429)
        #expect(again.headers["Retry-After"] == "20")  // 19.5 s, rounded up
    }

    @Test func refusedCallsDoNotExtendTheWait() async {
        let clock = ManualClock()
        let sandbox = AmodbSandbox(configuration: .init(requestsPerMinute: 1, now: { clock.now }))
        #expect(await get(sandbox, "/3/movie/550").status == 200)
        for _ in 0..<5 {
            clock.advance(by: .seconds(10))
            #expect(await get(sandbox, "/3/movie/550").status == 429)
        }
        clock.advance(by: .seconds(10))
        #expect(await get(sandbox, "/3/movie/550").status == 200)
    }

    @Test func eachKeyHasItsOwnWindow() async {
        let clock = ManualClock()
        let sandbox = AmodbSandbox(
            configuration: .init(additionalKeys: ["other"], requestsPerMinute: 1, now: { clock.now }))
        #expect(await get(sandbox, "/3/movie/550").status == 200)
        #expect(await get(sandbox, "/3/movie/550").status == 429)
        #expect(await get(sandbox, "/3/movie/550", bearer: "other").status == 200)
    }

    @Test func everyCallCountsWhateverItsAnswer() async {
        let clock = ManualClock()
        let sandbox = AmodbSandbox(configuration: .init(requestsPerMinute: 2, now: { clock.now }))
        #expect(await get(sandbox, "/3/nowhere").status == 404)
        #expect(await get(sandbox, "/3/movie/1").status == 404)
        #expect(await get(sandbox, "/3/movie/550").status == 429)
    }

    @Test func refusedKeysDoNotUseTheWindow() async {
        let clock = ManualClock()
        let sandbox = AmodbSandbox(configuration: .init(requestsPerMinute: 1, now: { clock.now }))
        for _ in 0..<3 { #expect(await get(sandbox, "/3/movie/550", bearer: "wrong").status == 401) }
        #expect(await get(sandbox, "/3/movie/550").status == 200)
    }

    @Test func resetRateLimitsEmptiesTheWindows() async {
        let sandbox = AmodbSandbox(configuration: .init(requestsPerMinute: 1))
        #expect(await get(sandbox, "/3/movie/550").status == 200)
        #expect(await get(sandbox, "/3/movie/550").status == 429)
        sandbox.resetRateLimits()
        #expect(await get(sandbox, "/3/movie/550").status == 200)
    }

    @Test func concurrentCallsAreAdmittedExactlyUpToTheLimit() async {
        let clock = ManualClock()
        let sandbox = AmodbSandbox(configuration: .init(requestsPerMinute: 100, now: { clock.now }))
        let statuses = await withTaskGroup(of: Int.self) { group in
            for index in 0..<200 {
                group.addTask { await get(sandbox, index % 2 == 0 ? "/3/movie/550" : "/3/trending/all/day").status }
            }
            return await group.reduce(into: [Int: Int]()) { counts, status in counts[status, default: 0] += 1 }
        }
        #expect(statuses == [200: 100, 429: 100])
        #expect(sandbox.totalRequestCount == 200)
    }
}
