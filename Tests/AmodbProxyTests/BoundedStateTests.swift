import AmodbModels
import AmodbTestSupport
import Foundation
import Testing

@testable import AmodbProxy

@Suite(.timeLimit(.minutes(1)))
struct BoundedStateTests {
    @Test(arguments: [(8, 404), (100_000, 404), (100_000, 500)])
    func manyDistinctFailingPathsLeaveNoTableGrowing(limit: Int, status: Int) async throws {
        let fetcher = ScriptedUpstream(fallback: .status(status, #"{"status_code":34,"status_message":"nope"}"#))
        let maxBytes = 64 * 1024
        let cache = MemoryResponseCache(maxBytes: maxBytes)
        let forwarder = forwarder(fetcher, cache: cache, limit: limit)
        for id in 1...5_000 { _ = await ask(forwarder, try AmodbRequest(route: .movie(id: 1_000_000 + id))) }
        #expect(await eventually { forwarder.stages.tableSizes.tasks == 0 })
        let sizes = forwarder.stages.tableSizes
        #expect(sizes.inFlight == 0)
        #expect(sizes.backoff == 0, "a miss has nothing to back off from")
        #expect(cache.usage.bytes <= maxBytes, "remembered 404s are held to the byte budget")
        #expect(cache.usage.entries * MemoryResponseCache.entryOverhead <= maxBytes)
        if limit == 8 {
            #expect(fetcher.calls.count == 8, "misses refused by the budget make no call and leave nothing")
        }
    }

    @Test func theBackoffTableIsBoundedWhateverFails() {
        let backoff = RefreshBackoff(capacity: 100)
        for index in 0..<10_000 {
            backoff.record(.init(until: 2000 + Double(index), fwdStatus: 500), for: "/movie/\(index)", now: 1000)
        }
        #expect(backoff.count == 100)
        #expect(backoff.failure(for: "/movie/9999", now: 1000) != nil, "the newest failures are kept")
        #expect(backoff.failure(for: "/movie/0", now: 1000) == nil, "the soonest-ending made room")
        backoff.record(.init(until: 5000, fwdStatus: nil), for: "/movie/new", now: 100_000)
        #expect(backoff.count == 1, "ended back-offs are swept")
    }
}
