import AmodbTestSupport
import Foundation
import Testing

@testable import AmodbProxy

/// The snapshot written entry by entry reads back whole, and replaces the previous file
/// only once it is complete.
@Suite(.timeLimit(.minutes(1)))
struct CacheSnapshotWriterTests {
    private static let bounds = {
        var configuration = ProxyConfiguration()
        configuration.maxStaleSeconds = 86_400
        configuration.negativeTTL = 60
        return CacheSnapshot.Bounds(configuration)
    }()
    private static let validator = AnswerValidator(key: Secret(ProxyHarness.key))

    private func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("amodb-snapshot-\(UUID().uuidString).json").path
    }

    /// Movies 1…`count`, each with an overview long enough that the file spans many writes.
    private func entries(_ count: Int, storedAt: Double, scenes: Int = 2_000) -> [(key: String, entry: CachedResponse)]
    {
        (1...count).map { id in
            let overview = String(repeating: "scene \(id) ", count: scenes)
            let body = #"{"id":\#(id),"title":"Movie \#(id)","overview":"\#(overview)"}"#
            return ("/movie/\(id)", CachedResponse(body: Array(body.utf8), storedAt: storedAt, lifetime: 1800))
        }
    }

    @Test func everyEntryWrittenOneByOneReadsBackWithItsBodyAndTimes() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let written = entries(300, storedAt: 1_000)
        let snapshot = CacheSnapshot(path: path)
        #expect(try snapshot.write(written, now: 1_010) == 300)
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0 > 300 * 20_000)
        let loaded = try snapshot.load(now: 1_020, bounds: Self.bounds, validator: Self.validator)
        #expect(loaded.dropped.isEmpty)
        #expect(loaded.entries.count == 300)
        for (read, original) in zip(loaded.entries, written) {
            #expect(read.key == original.key)
            #expect(read.entry.body == original.entry.body)
            #expect(read.entry.storedAt == original.entry.storedAt)
            #expect(read.entry.lifetime == original.entry.lifetime)
        }
    }

    @Test func anEmptyCacheWritesAFileThatReadsBackEmpty() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let snapshot = CacheSnapshot(path: path)
        #expect(try snapshot.write([], now: 5) == 0)
        let loaded = try snapshot.load(now: 6, bounds: Self.bounds, validator: Self.validator)
        #expect(loaded.entries.isEmpty && loaded.dropped.isEmpty)
    }

    @Test func aWriteThatFailsLeavesThePreviousSnapshotWholeAndNoTemporaryFile() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let snapshot = CacheSnapshot(path: path)
        try snapshot.write(entries(3, storedAt: 1_000), now: 1_000)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        // Where the next file would be written, something that is not a file.
        let temporary = path + ".tmp-\(getpid())"
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: temporary) }
        #expect(throws: (any Error).self) { try snapshot.write(entries(5, storedAt: 1_000), now: 1_001) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        try FileManager.default.removeItem(atPath: temporary)
        try snapshot.write(entries(5, storedAt: 1_000), now: 1_002)
        #expect(try snapshot.load(now: 1_003, bounds: Self.bounds, validator: Self.validator).entries.count == 5)
        let directory = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix(name + ".tmp") }
                .isEmpty)
    }

    /// Peak memory while a 56 MB cache is written, printed; run with
    /// `AMODB_SNAPSHOT_MEASURE=1 swift test --filter CacheSnapshotWriterTests` (Linux: the peak
    /// is reset through `/proc/self/clear_refs`, then read as `VmHWM`).
    @Test(.enabled(if: ProcessInfo.processInfo.environment["AMODB_SNAPSHOT_MEASURE"] == "1"))
    func peakMemoryWhileWritingAFiftySixMegabyteCache() throws {
        func status(_ field: String) -> Int {
            let text = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
            let line = text.split(separator: "\n").first { $0.hasPrefix(field + ":") } ?? ""
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
        }
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let cache = entries(560, storedAt: 1_000, scenes: 10_000)  // 560 bodies of about 100 KB
        let bytes = cache.reduce(0) { $0 + $1.entry.body.count }
        try "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
        let before = status("VmRSS")
        try CacheSnapshot(path: path).write(cache, now: 1_010)
        let peak = status("VmHWM")
        print(
            "MEASURE snapshot: \(bytes / 1_000_000) MB of bodies; RSS before the write \(before / 1024) MB, peak during it \(peak / 1024) MB (+\((peak - before) / 1024) MB)"
        )
    }
}
