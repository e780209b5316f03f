import AmodbCompression
import AmodbHTTP
import AmodbModels
import AmodbTestSupport
import Testing

@testable import AmodbProxy

/// A fill answers everyone who waited on it in the coding they asked for, from the gzip
/// variant it makes before answering; an answer the cache will not keep (with its variants)
/// is not compressed.
@Suite(.timeLimit(.minutes(1)))
struct FillGzipTests {
    static let body = Array(ScriptedUpstream.moviePage.utf8)

    static func accepting(_ value: String) -> AcceptEncoding {
        var accept = AcceptEncoding()
        accept.add(fieldValue: value)
        return accept
    }

    /// What the cache counts for the answer under `request`'s key, identity bytes only.
    static func identityCost(_ request: AmodbRequest) -> Int {
        body.count + request.pathAndQuery.utf8.count + MemoryResponseCache.entryOverhead
    }

    @Test func theLeaderAndItsWaitersGetTheGzipTheFillMade() async throws {
        let fetcher = ScriptedUpstream()
        fetcher.hold()
        let forwarder = forwarder(fetcher)
        let request = try AmodbRequest(route: .trending(.movie, .week))
        let leader = Task { await ask(forwarder, request, accept: Self.accepting("gzip")) }
        #expect(await eventually { fetcher.heldCount == 1 })
        let joined = Task { await ask(forwarder, request, accept: Self.accepting("br, gzip")) }
        let plain = Task { await ask(forwarder, request) }
        #expect(await eventually { forwarder.stages.statistics.value(.collapsed) == 2 })
        fetcher.release()

        let compressed = [await leader.value, await joined.value]
        for answer in compressed {
            #expect(answer.status == 200)
            #expect(answer.contentEncoding == "gzip", "br is not made yet; gzip is")
            #expect(try ContentDecoder(maximumOutputSize: 1 << 20).decode(answer.body, from: .gzip) == Self.body)
        }
        #expect(compressed[0].body == compressed[1].body)
        let identity = await plain.value
        #expect(identity.contentEncoding == nil)
        #expect(identity.body == Self.body)
        #expect(fetcher.calls.count == 1)
        await forwarder.stages.drain(within: 1)
    }

    @Test func anAnswerTooLargeToStoreIsNotCompressed() async throws {
        let request = try AmodbRequest(route: .trending(.movie, .week))
        let cache = MemoryResponseCache(
            maxBytes: (Self.identityCost(request) - 1) * MemoryResponseCache.maxEntryFraction, shardCount: 1)
        let forwarder = forwarder(ScriptedUpstream(), cache: cache)
        let answer = await ask(forwarder, request, accept: Self.accepting("gzip"))
        #expect(answer.status == 200)
        #expect(answer.cacheOutcome == .miss(fwdStatus: 200, stored: false, collapsed: false, detail: nil))
        #expect(answer.contentEncoding == nil)
        #expect(answer.body == Self.body)
        #expect(cache.usage.entries == 0)
        await forwarder.stages.drain(within: 1)
        #expect(forwarder.stages.variantMaker.compressions == 0)
    }

    @Test func anAnswerThatFitsOnlyWithoutItsGzipIsStoredAsIdentity() async throws {
        let request = try AmodbRequest(route: .trending(.movie, .week))
        let cache = MemoryResponseCache(
            maxBytes: Self.identityCost(request) * MemoryResponseCache.maxEntryFraction, shardCount: 1)
        let forwarder = forwarder(ScriptedUpstream(), cache: cache)
        let answer = await ask(forwarder, request, accept: Self.accepting("gzip"))
        #expect(answer.cacheOutcome == .miss(fwdStatus: 200, stored: true, collapsed: false, detail: nil))
        #expect(answer.contentEncoding == nil)
        #expect(answer.body == Self.body)
        #expect(cache.entry(for: request.pathAndQuery)?.body == Self.body)
        await forwarder.stages.drain(within: 1)
        #expect(
            forwarder.stages.variantMaker.compressedBytes == 0,
            "asked before compressing: it could not be kept with its variants")
    }
}
