public import Foundation
import Synchronization

/// Starts child processes one at a time. Tests launch binaries from many threads at once
/// (the proxy, `redis-server`), and concurrent `Process.run()` calls in
/// swift-corelibs-foundation were seen to crash inside `run()` (a bad pointer in its
/// memcpy) under load; launching is quick, so serialising it costs nothing.
///
/// A child inherits the signal mask of the thread that launches it, and test-runner
/// threads block most signals: a `redis-server` started from one never saw SIGTERM and
/// outlived a crashed run. The launching thread unblocks every signal for the moment of
/// the launch, so each child starts with none blocked.
public enum ProcessLaunch {
    private static let lock = Mutex(())

    /// `process.run()`, never concurrently with another launch through here.
    public static func run(_ process: Process) throws {
        try lock.withLock { _ in
            var none = sigset_t()
            sigemptyset(&none)
            var previous = sigset_t()
            pthread_sigmask(SIG_SETMASK, &none, &previous)
            defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
            try process.run()
        }
    }
}
