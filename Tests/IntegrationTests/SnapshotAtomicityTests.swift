import AmodbProxy
import AmodbTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The cache snapshot is written atomically: a temporary file, then `rename(2)`. A reader
/// (the next start of the proxy, a backup job) sees the old file or the new one, never a
/// part of one, and every write puts a new file (a new inode) in place.
@Suite(.timeLimit(.minutes(1)))
struct SnapshotAtomicityTests {
    /// A valid trending page of about 100 KB, so a write takes long enough to be caught halfway.
    static let bigPage = ScriptedUpstream.moviePage.replacingOccurrences(
        of: #""overview":"""#, with: #""overview":""# + String(repeating: "A long overview. ", count: 6000) + #"""#)

    @Test func aReaderNeverSeesAPartialSnapshotAndEveryWriteIsANewFile() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("snapshot-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/cache.json"
        var configuration = ProxyHarness.configuration()
        configuration.snapshotPath = path
        let fetcher = ScriptedUpstream(
            fallback: .response(UpstreamResponse(status: 200, body: Array(Self.bigPage.utf8))))
        let harness = try ProxyHarness(.live, configuration: configuration, fetcher: fetcher)
        try await withServer(harness) { harness in
            for page in 1...20 {
                #expect(try await harness.get("/3/trending/movie/day?page=\(page)").status == 200)
            }
            harness.proxy.writeSnapshot()
            let reader = SnapshotReader(path: path)
            reader.start()
            #expect(await eventually { reader.reads >= 1 })
            var inodes = [try Self.inode(of: path)]
            for _ in 0..<10 {
                harness.proxy.writeSnapshot()
                inodes.append(try Self.inode(of: path))
            }
            let readsDuringWrites = reader.reads
            reader.stop()
            #expect(readsDuringWrites >= 1)
            #expect(reader.partialReads == 0, "a reader saw a partly written snapshot")
            #expect(
                zip(inodes, inodes.dropFirst()).allSatisfy { $0 != $1 }, "a write reused the file in place: \(inodes)")
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: directory) == ["cache.json"],
                "no temporary file is left behind")
        }
    }

    static func inode(of path: String) throws -> UInt64 {
        var info = stat()
        guard stat(path, &info) == 0 else { throw CocoaError(.fileReadNoSuchFile) }
        return UInt64(info.st_ino)
    }
}

/// Reads a file over and over on a thread of its own and counts the reads that were not
/// complete JSON.
private final class SnapshotReader: Sendable {
    private let path: String
    private let counts = Mutex((reads: 0, partial: 0))
    private let stopped = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    init(path: String) { self.path = path }

    var reads: Int { counts.withLock { $0.reads } }
    var partialReads: Int { counts.withLock { $0.partial } }

    func start() {
        let thread = Thread { [self] in
            while !stopped.load(ordering: .relaxed) {
                guard let data = FileManager.default.contents(atPath: path) else { continue }
                let complete = (try? JSONSerialization.jsonObject(with: data)) != nil
                counts.withLock { counts in
                    counts.reads += 1
                    if !complete { counts.partial += 1 }
                }
            }
            finished.signal()
        }
        thread.start()
    }

    /// Stops the loop and waits for its last read.
    func stop() {
        stopped.store(true, ordering: .relaxed)
        finished.wait()
    }
}
