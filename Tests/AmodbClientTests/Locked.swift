import Foundation

/// A value shared between a test and URLSession's delegate thread.
///
/// `@unchecked Sendable`: every access goes through `lock`. An `NSLock` rather than
/// `Mutex` because the package still supports macOS 13, where `Mutex` is unavailable.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    /// A copy of the current value.
    var current: Value { withLock { $0 } }
}
