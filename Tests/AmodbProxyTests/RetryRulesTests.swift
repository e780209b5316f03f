import AmodbModels
import Testing

@testable import AmodbProxy

/// The budget's rules after a refused or failed call, on their own.
@Suite struct RetryRulesTests {
    private let rules = RetryRules(maxRateLimitRetries: 2, retryAfterCap: 30, refreshBackoff: 10)

    @Test func retriesOnlyShortWaitsAndOnlyAFewTimes() {
        #expect(rules.retries(after: 5, retries: 0))
        #expect(rules.retries(after: 30, retries: 1))
        #expect(!rules.retries(after: 30, retries: 2), "the third retry is one too many")
        #expect(!rules.retries(after: 31, retries: 0), "a wait beyond the cap is passed on, not waited out")
        #expect(!RetryRules(maxRateLimitRetries: 2, retryAfterCap: 0).retries(after: 1, retries: 0))
    }

    @Test func aFailedRefreshBacksOffAtLeastTheShortestAndAtMostTheLongest() {
        let failed = FetchFailure(status: 502, message: "amodb failed with status 500.", fwdStatus: 500)
        #expect(rules.backoff(after: failed) == 10)
        var asked = RetryRules.rateLimited(retryAfter: 45)
        #expect(rules.backoff(after: asked) == 45)
        asked.backoff = 3
        #expect(rules.backoff(after: asked) == 10)
        asked.backoff = .infinity
        #expect(rules.backoff(after: asked) == 10)
        asked.backoff = 10 * RetryAfter.longest
        #expect(rules.backoff(after: asked) == RetryAfter.longest)
    }

    @Test func amodbsRateLimitIsA503WaitingAsLongAsAmodbAsked() {
        let refused = RetryRules.rateLimited(retryAfter: 12.2)
        #expect(refused.status == 503)
        #expect(refused.fwdStatus == 429)
        #expect(refused.retryAfter == 12.2)
        #expect(refused.backoff == 12.2)
        #expect(refused.message.contains("13 s"))
        let unreadable = RetryRules.rateLimited(retryAfter: nil)
        #expect(unreadable.retryAfter == RetryRules.unreadableRetryAfter)
    }
}
