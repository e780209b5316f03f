import AmodbHTTP
@testable import AmodbProxy
import Testing

/// The cache outcome rides on a response as its annotation and comes back exactly as it went in.
struct CacheOutcomeAnnotationTests {
    @Test(arguments: [
        CacheOutcome.hit(ttl: 1800), .hit(ttl: 0), .hit(ttl: Int(Int32.max)), .sharedHit(ttl: 1799), .sharedHit(ttl: 0),
        .stale(ttl: 0, reason: .revalidate, fwdStatus: nil), .stale(ttl: -86_400, reason: .error, fwdStatus: 503),
        .stale(ttl: -1, reason: .budget, fwdStatus: 200),
        .miss(fwdStatus: nil, stored: false, collapsed: false, detail: nil),
        .miss(fwdStatus: 200, stored: true, collapsed: true, detail: nil),
        .miss(fwdStatus: 404, stored: true, collapsed: false, detail: nil),
        .miss(fwdStatus: nil, stored: false, collapsed: true, detail: .budgetExhausted),
        .miss(fwdStatus: 429, stored: false, collapsed: false, detail: .clientShareSpent),
        .miss(fwdStatus: nil, stored: false, collapsed: false, detail: .tooManyFetches),
    ])
    func anOutcomeSurvivesTheTripOnAResponse(outcome: CacheOutcome) {
        var response = HTTPResponse(status: 200)
        response.cacheOutcome = outcome
        #expect(response.annotation != 0)
        #expect(response.cacheOutcome == outcome)
        #expect(response.cacheOutcome?.cacheStatus == outcome.cacheStatus)
    }

    @Test func aResponseWithoutAnOutcomeHasNone() {
        var response = HTTPResponse(status: 404)
        #expect(response.cacheOutcome == nil)
        response.cacheOutcome = .hit(ttl: 5)
        response.cacheOutcome = nil
        #expect(response.cacheOutcome == nil)
        #expect(response.annotation == 0)
    }

    @Test func aTTLBeyond32BitsIsClamped() {
        var response = HTTPResponse(status: 200)
        response.cacheOutcome = .stale(ttl: Int.min, reason: .error, fwdStatus: nil)
        #expect(response.cacheOutcome == .stale(ttl: Int(Int32.min), reason: .error, fwdStatus: nil))
    }
}
