import AmodbProxy
import AmodbTestSupport
import Foundation
import Testing

@Suite
struct MemoryResponseCacheTests {
    private func entry(_ size: Int, status: Int = 200) -> CachedResponse {
        CachedResponse(
            status: status, body: Array(repeating: UInt8(ascii: "a"), count: size), storedAt: 0, lifetime: 60)
    }

    /// What one entry of `size` body bytes under a one-character key costs.
    private func cost(_ size: Int) -> Int { size + 1 + MemoryResponseCache.entryOverhead }

    @Test func evictsTheLeastRecentlyUsedBeyondTheByteBudget() {
        // 32 entries of 98 body bytes under 3-byte keys fill the budget exactly.
        let each = 98 + 3 + MemoryResponseCache.entryOverhead
        let cache = MemoryResponseCache(maxBytes: 32 * each, shardCount: 1)
        let keys = (0..<33).map { "k" + ($0 < 10 ? "0" : "") + String($0) }
        for key in keys.prefix(32) { #expect(cache.store(entry(98), for: key)) }
        #expect(cache.usage.bytes == 32 * each)
        _ = cache.entry(for: "k00")  // k00 is now more recent than k01
        #expect(cache.store(entry(98), for: "k32"))
        #expect(cache.entry(for: "k01") == nil)
        #expect(cache.entry(for: "k00") != nil)
        #expect(cache.entry(for: "k32") != nil)
        #expect(cache.usage.entries == 32)
        #expect(cache.usage.bytes == 32 * each)
    }

    @Test func replacingAnEntryCountsItsBytesOnce() {
        let cache = MemoryResponseCache(maxBytes: 1_000_000, shardCount: 4)
        cache.store(entry(500), for: "a")
        cache.store(entry(700), for: "a")
        #expect(cache.usage.entries == 1)
        #expect(cache.usage.bytes == cost(700))
    }

    @Test func countsEachEntrysKeyAndOverheadAgainstTheBudget() {
        // Remembered 404s are small: their count, not their bodies, is what fills memory.
        let maxBytes = 64 * 1024
        let cache = MemoryResponseCache(maxBytes: maxBytes, shardCount: 4)
        for id in 0..<10_000 { cache.store(entry(60, status: 404), for: "/movie/\(1_000_000 + id)") }
        let usage = cache.usage
        #expect(usage.bytes <= maxBytes)
        #expect(usage.entries * (60 + "/movie/1000000".utf8.count + MemoryResponseCache.entryOverhead) == usage.bytes)
        #expect(usage.entries * MemoryResponseCache.entryOverhead <= maxBytes)
    }

    @Test(arguments: [64 * 1024, 1024 * 1024, 64 * 1024 * 1024])
    func refusesAnEntryLargerThanAThirtySecondOfTheBudget(maxBytes: Int) {
        let cache = MemoryResponseCache(maxBytes: maxBytes)
        let largest = maxBytes / MemoryResponseCache.maxEntryFraction
        #expect(!cache.store(entry(largest), for: "big"), "with its key and overhead it is over the bound")
        #expect(cache.entry(for: "big") == nil)
        #expect(cache.usage.entries == 0)
        #expect(cache.store(entry(largest - 1 - MemoryResponseCache.entryOverhead), for: "x"))
    }

    @Test func neverHoldsMoreThanItsBudgetWhateverTheSizes() {
        let maxBytes = 256 * 1024
        let cache = MemoryResponseCache(maxBytes: maxBytes, shardCount: 16)
        var generator = SystemRandomNumberGenerator()
        for index in 0..<2000 {
            // Up to twice a shard's share: an entry that large must never be kept, even alone.
            cache.store(entry(Int.random(in: 0...(maxBytes / 8), using: &generator)), for: "/movie/\(index)")
            #expect(cache.usage.bytes <= maxBytes)
        }
        #expect(cache.allEntries().allSatisfy { $0.entry.body.count < cache.maxEntryBytes })
    }
}
