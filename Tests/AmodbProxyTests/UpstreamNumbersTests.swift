import AmodbTestSupport
import Foundation
import Testing

@testable import AmodbProxy

@Suite(.timeLimit(.minutes(1)))
struct UpstreamNumbersTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let headers: [String: String]
        /// The next miss: its status and `Retry-After`.
        let status: Int
        let retryAfter: String?
        var testDescription: String {
            headers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
        }
    }

    static let cases: [Case] = [
        Case(headers: ["x-ratelimit-remaining": "inf"], status: 200, retryAfter: nil),
        Case(headers: ["x-ratelimit-remaining": "nan"], status: 200, retryAfter: nil),
        Case(headers: ["x-ratelimit-remaining": "1e19"], status: 200, retryAfter: nil),
        Case(headers: ["x-ratelimit-remaining": "99999999999999999999"], status: 200, retryAfter: nil),
        Case(headers: ["x-ratelimit-limit": "1e300"], status: 200, retryAfter: nil),
        Case(headers: ["x-ratelimit-limit": "-inf", "ratelimit-limit": "2"], status: 200, retryAfter: nil),
        Case(headers: ["ratelimit-limit": "1e300", "ratelimit-remaining": "-1"], status: 200, retryAfter: nil),
        Case(headers: ["x-ratelimit-remaining": "0", "x-ratelimit-reset": "1e300"], status: 503, retryAfter: "60"),
        Case(headers: ["x-ratelimit-remaining": "0", "x-ratelimit-reset": "inf"], status: 503, retryAfter: "60"),
        Case(headers: ["x-ratelimit-remaining": "0", "x-ratelimit-reset": "5"], status: 503, retryAfter: "5"),
        Case(headers: ["x-ratelimit-remaining": "0", "x-ratelimit-reset": "1800000005"], status: 503, retryAfter: "5"),
        Case(
            headers: ["x-ratelimit-remaining": "0", "x-ratelimit-reset": "1800000005000"], status: 503, retryAfter: "5"),
        Case(
            headers: ["ratelimit-remaining": "0", "ratelimit-reset": "1800000004000.5"], status: 503, retryAfter: "5"),
        Case(headers: ["x-ratelimit-remaining": "0", "x-ratelimit-reset": "172800"], status: 503, retryAfter: "60"),
    ]

    @Test(arguments: cases)
    func numbersInRateLimitFieldsNeverCrashAndAreReadByTheirSize(_ testCase: Case) async throws {
        let fetcher = ScriptedUpstream(fallback: .status(200, ScriptedUpstream.movieDetails, headers: testCase.headers))
        let harness = try ProxyHarness(fetcher: fetcher, clock: ManualClock())
        try await withServer(harness) { _ async throws in
            #expect(try await harness.get("/3/movie/1").status == 200)
            let next = try await harness.get("/3/movie/2")
            #expect(next.status == testCase.status)
            #expect(next.header("Retry-After") == testCase.retryAfter)
        }
    }

    @Test(arguments: ["1e300", "inf", "-inf", "nan", "99999999999999999999", "-5", "1.5"])
    func anUnreadableRetryAfterOnA429NeverCrashes(_ value: String) async throws {
        let fetcher = ScriptedUpstream(fallback: .status(429, "", headers: ["retry-after": value]))
        let harness = try ProxyHarness(
            configuration: ProxyHarness.configuration { $0.retryAfterCap = 0 }, fetcher: fetcher, clock: ManualClock())
        try await withServer(harness) { _ async throws in
            let response = try await harness.get("/3/trending/movie/week")
            #expect(response.status == 503)
            // A number too large is a day; anything unreadable is read as amodb's default of a second.
            #expect(response.header("Retry-After") == (value == "99999999999999999999" ? "86400" : "1"))
        }
    }

    @Test func aRetryAfterGivenAsAnHTTPDateIsRead() async throws {
        let clock = ManualClock()
        let date = Date(timeIntervalSince1970: clock.now() + 45)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let fetcher = ScriptedUpstream(
            fallback: .status(429, "", headers: ["retry-after": formatter.string(from: date)]))
        let harness = try ProxyHarness(fetcher: fetcher, clock: clock)
        try await withServer(harness) { _ async throws in
            let response = try await harness.get("/3/trending/movie/week")
            #expect(response.status == 503)
            #expect(response.header("Retry-After") == "45")
            #expect(fetcher.calls.count == 1, "45 s is past the cap of 30: passed on, not waited out")
            let next = try await harness.get("/3/trending/movie/day")
            #expect(next.header("Retry-After") == "45", "the window is spent until then")
        }
    }
}
