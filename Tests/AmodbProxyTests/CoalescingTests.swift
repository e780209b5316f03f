import AmodbModels
import AmodbTestSupport
import Foundation
import Synchronization
import Testing

@testable import AmodbProxy

/// A cache that, once armed, runs an action inside the next lookup that finds nothing,
/// after the lookup and before its caller sees the result: the moment between "not
/// cached" and "register a fetch" where a fetch could complete unseen.
private final class InterleavingCache: ResponseCache {
    let inner = MemoryResponseCache()
    private let state = Mutex<(action: (@Sendable () -> Bool)?, outcome: Bool?)>((nil, nil))

    /// Runs `action` inside the next lookup that finds nothing; what it returns is `outcome`.
    func arm(_ action: @escaping @Sendable () -> Bool) {
        state.withLock { $0.action = action }
    }

    /// What the armed action returned, once it has run.
    var outcome: Bool? { state.withLock { $0.outcome } }

    func entry(for key: String) -> CachedResponse? {
        let found = inner.entry(for: key)
        if found == nil,
            let action = state.withLock({ state in
                defer { state.action = nil }
                return state.action
            })
        {
            let outcome = action()
            state.withLock { $0.outcome = outcome }
        }
        return found
    }

    func store(_ entry: CachedResponse, for key: String) -> Bool { inner.store(entry, for: key) }
    func admits(byteCount: Int, for key: String) -> Bool { inner.admits(byteCount: byteCount, for: key) }
    var usage: (entries: Int, bytes: Int) { inner.usage }
    func allEntries() -> [(key: String, entry: CachedResponse)] { inner.allEntries() }
}

@Suite(.timeLimit(.minutes(1)))
struct CoalescingTests {
    @Test func aRequestArrivingJustAsAFetchCompletesUsesItsAnswerInsteadOfCallingAgain() async throws {
        let fetcher = ScriptedUpstream()
        let cache = InterleavingCache()
        let forwarder = forwarder(fetcher, cache: cache)
        let request = try AmodbRequest(route: .trending(.movie, .week))

        fetcher.hold()
        let first = Task { await ask(forwarder, request) }
        #expect(await eventually { fetcher.heldCount == 1 })
        // The second request finds nothing; before it can register, the first fetch completes.
        cache.arm {
            fetcher.release()
            // Generous: a busy machine's first crunch of tests can hold the fill's task that long.
            return eventuallyBlocking(within: 30) {
                cache.inner.entry(for: request.pathAndQuery) != nil && forwarder.stages.tableSizes.inFlight == 0
            }
        }
        let second = await ask(forwarder, request)
        #expect(cache.outcome == true, "the first fetch completed between the second's lookup and its registration")
        #expect(await first.value.status == 200)
        #expect(second.status == 200)
        #expect(second.cacheOutcome == .hit(ttl: 1800))
        #expect(fetcher.calls.count == 1, "one upstream call, not a second one for the late request")
        await forwarder.stages.drain(within: 1)
    }

    @Test func aRequestArrivingWhileAFetchIsInFlightJoinsIt() async throws {
        let fetcher = ScriptedUpstream()
        let forwarder = forwarder(fetcher)
        let request = try AmodbRequest(route: .movie(id: 550))
        fetcher.setFallback(.status(200, ScriptedUpstream.movieDetails))
        fetcher.hold()
        let first = Task { await ask(forwarder, request) }
        #expect(await eventually { fetcher.heldCount == 1 })
        let second = Task { await ask(forwarder, request) }
        #expect(await eventually { forwarder.stages.statistics.value(.collapsed) == 1 })
        fetcher.release()
        #expect(await first.value.cacheOutcome == .miss(fwdStatus: 200, stored: true, collapsed: false, detail: nil))
        #expect(await second.value.cacheOutcome == .miss(fwdStatus: 200, stored: true, collapsed: true, detail: nil))
        #expect(fetcher.calls.count == 1)
        await forwarder.stages.drain(within: 1)
    }

    @Test func pathsInFlightAreBoundedAndANewOneIsRefusedBeyondIt() async throws {
        let fetcher = ScriptedUpstream(fallback: .status(200, ScriptedUpstream.movieDetails))
        let forwarder = forwarder(fetcher) { $0.maxFetchesInFlight = 2 }
        fetcher.hold()
        let held = (1...2).map { id in Task { await ask(forwarder, try! AmodbRequest(route: .movie(id: id))) } }
        #expect(await eventually { fetcher.heldCount == 2 })
        // Refused at once, not held: the answer is immediate.
        let refused = forwarder.respond(to: try AmodbRequest(route: .movie(id: 3)), ifNoneMatch: nil, client: nil) {
            { _ in }
        }
        #expect(refused?.status == 503)
        #expect(refused?.headers["Retry-After"] == "1")
        #expect(
            refused?.cacheOutcome == .miss(fwdStatus: nil, stored: false, collapsed: false, detail: .tooManyFetches))
        #expect(forwarder.stages.tableSizes.inFlight == 2)
        fetcher.release()
        for task in held { _ = await task.value }
        #expect(forwarder.stages.tableSizes.inFlight == 0)
        await forwarder.stages.drain(within: 1)
    }
}
