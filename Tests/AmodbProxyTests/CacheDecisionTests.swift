import AmodbModels
import Testing

@testable import AmodbProxy

/// The cache decision is a pure function of the entry, the time and the policy: fresh,
/// stale (its refresh backing off), revalidate, or miss. No server, no clock, no cache.
struct CacheDecisionTests {
    /// Trending lists fresh 30 minutes, movies a day, max-stale a day.
    private static let freshness: Freshness = {
        var configuration = ProxyConfiguration()
        configuration.cacheTTL = 1800
        configuration.movieTTL = 86_400
        configuration.maxStaleSeconds = 86_400
        return Freshness(configuration)
    }()
    private static let trending = Route.trending(.movie, .week)

    private static func decide(
        _ entry: CachedResponse?, route: Route = trending, at now: Double, failure: RefreshBackoff.Failure? = nil,
        freshness: Freshness = freshness
    ) -> CacheDecision {
        CacheDecision(entry, of: route, at: now, freshness: freshness) { failure }
    }

    private static func entry(status: Int = 200, storedAt: Double = 1000, lifetime: Double = 1800) -> CachedResponse {
        CachedResponse(status: status, body: Array("{}".utf8), storedAt: storedAt, lifetime: lifetime)
    }

    @Test func nothingStoredIsAMiss() {
        #expect(Self.decide(nil, at: 1000) == .miss)
    }

    // Whole seconds, the age rounded down (RFC 9111 §5.1), so the seconds left round up.
    @Test(arguments: [(1000.0, 1800), (1001.5, 1799), (2799.0, 1)])
    func anEntryYoungerThanItsLifetimeIsFreshWithTheSecondsLeft(now: Double, ttl: Int) {
        #expect(Self.decide(Self.entry(), at: now) == .fresh(ttl: ttl))
    }

    @Test func aRemembered404IsFreshForItsOwnLifetimeThenAMiss() {
        let notFound = Self.entry(status: 404, lifetime: 60)
        #expect(Self.decide(notFound, at: 1030) == .fresh(ttl: 30))
        #expect(Self.decide(notFound, at: 1060) == .miss, "a 404 is never served stale")
    }

    @Test func aStale200WithinMaxStaleIsRevalidated() {
        #expect(Self.decide(Self.entry(), at: 2800) == .revalidate(ttl: 0, overdue: false))
        #expect(Self.decide(Self.entry(), at: 4600) == .revalidate(ttl: -1800, overdue: false))
    }

    /// A miss-only route (a search) is never refreshed in the background: past its lifetime
    /// its answer is a miss, whatever max-stale allows the others.
    @Test func aMissOnlyRoutesStaleAnswerIsAMiss() {
        #expect(Self.decide(Self.entry(), route: .searchMovie, at: 2799) == .fresh(ttl: 1))
        #expect(Self.decide(Self.entry(), route: .searchMovie, at: 2800) == .miss)
        let failure = RefreshBackoff.Failure(until: 9999, fwdStatus: 503)
        #expect(Self.decide(Self.entry(), route: .searchMovie, at: 3000, failure: failure) == .miss)
        #expect(Self.decide(Self.entry(), route: .movieList(.popular), at: 2800) == .revalidate(ttl: 0, overdue: false))
    }

    @Test func pastTwiceItsLifetimeItsRefreshIsOverdue() {
        #expect(Self.decide(Self.entry(), at: 4601) == .revalidate(ttl: -1801, overdue: true))
    }

    @Test func aStale200WhoseRefreshBacksOffIsServedStaleWithAmodbsStatus() {
        let failure = RefreshBackoff.Failure(until: 9999, fwdStatus: 503)
        #expect(Self.decide(Self.entry(), at: 3000, failure: failure) == .stale(ttl: -200, fwdStatus: 503))
    }

    @Test func theBackOffIsNotAskedForAFreshEntry() {
        var asked = false
        let decision = CacheDecision(Self.entry(), of: Self.trending, at: 1500, freshness: Self.freshness) {
            asked = true
            return nil
        }
        #expect(decision == .fresh(ttl: 1300))
        #expect(!asked, "the hit path takes no lock")
    }

    @Test func pastMaxStaleIsAMiss() {
        #expect(Self.decide(Self.entry(), at: 1000 + 86_400) == .miss)
        #expect(Self.decide(Self.entry(), at: 1000 + 86_399) == .revalidate(ttl: -84_599, overdue: true))
    }

    @Test func maxStaleIsAtLeastTwiceTheRouteLifetime() {
        // A movie kept a day stays servable stale for two days, whatever max-stale says.
        let movie = Self.entry(lifetime: 86_400)
        #expect(
            Self.decide(movie, route: .movie(id: 550), at: 1000 + 100_000) == .revalidate(ttl: -13_600, overdue: false))
        #expect(Self.decide(movie, route: .movie(id: 550), at: 1000 + 172_800) == .miss)
    }

    @Test func noMaxStaleMeansNeverStale() {
        var configuration = ProxyConfiguration()
        configuration.maxStaleSeconds = 0
        #expect(Self.decide(Self.entry(), at: 2800, freshness: Freshness(configuration)) == .miss)
    }
}
