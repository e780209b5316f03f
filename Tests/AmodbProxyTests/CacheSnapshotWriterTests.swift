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

    /// The entries of a cache, handed to the writer one at a time, noting how many bytes of
    /// bodies it had been given and how long the file being written was at each hand-over.
    private final class WatchedEntries: Sequence {
        let entries: [(key: String, entry: CachedResponse)]
        let file: String
        /// At each entry handed over: the body bytes handed over before it, and the file's size.
        var handedAndOnDisk: [(handed: Int, onDisk: Int)] = []

        init(_ entries: [(key: String, entry: CachedResponse)], file: String) {
            self.entries = entries
            self.file = file
        }

        func makeIterator() -> AnyIterator<(key: String, entry: CachedResponse)> {
            var index = 0
            var handed = 0
            return AnyIterator { [self] in
                guard index < entries.count else { return nil }
                let size = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0
                handedAndOnDisk.append((handed, size))
                handed += entries[index].entry.body.count
                index += 1
                return entries[index - 1]
            }
        }
    }

    /// Writing an 11 MB cache keeps at most a few hundred KB of it unwritten: the file grows as
    /// the entries are handed over. A writer that encoded the whole file before writing it
    /// would hold a second copy of the cache (more, in base64) at its peak, and its file
    /// would stay empty until the last entry.
    @Test func writingACacheKeepsLittleOfItUnwritten() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let cache = entries(120, storedAt: 1_000, scenes: 10_000)  // 120 bodies of 80 to 100 KB
        let watched = WatchedEntries(cache, file: path + ".tmp-\(getpid())")
        #expect(try CacheSnapshot(path: path).write(watched, now: 1_010) == 120)
        #expect(watched.handedAndOnDisk.count == 120)
        // Bodies are written in base64 (a third larger), so what is on disk trails what was
        // handed over by at most the write buffer and the entry being encoded.
        let mostUnwritten = watched.handedAndOnDisk.map { $0.handed - $0.onDisk }.max() ?? .max
        #expect(mostUnwritten < 1_000_000, "at most \(mostUnwritten) bytes of bodies handed over were not yet on disk")
        #expect(watched.handedAndOnDisk.last?.onDisk ?? 0 > 11_000_000, "most of the cache is on disk before its end")
    }
}
