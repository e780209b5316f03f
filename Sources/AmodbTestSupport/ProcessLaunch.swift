public import Foundation
import Synchronization

/// Starts child processes one at a time. Tests launch binaries from many threads at once
/// (the proxy, `redis-server`), and concurrent `Process.run()` calls in
/// swift-corelibs-foundation were seen to crash inside `run()` (a bad pointer in its
/// memcpy) under load; launching is quick, so serialising it costs nothing.
public enum ProcessLaunch {
    private static let lock = Mutex(())

    /// `process.run()`, never concurrently with another launch through here.
    public static func run(_ process: Process) throws {
        try lock.withLock { _ in try process.run() }
    }
}
