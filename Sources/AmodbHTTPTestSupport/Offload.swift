import Foundation

/// Runs blocking work (raw sockets) on a thread of its own, so tests never block the
/// concurrency pool that the proxy's own tasks need.
public func offloaded<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            continuation.resume(with: Result { try body() })
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
}
