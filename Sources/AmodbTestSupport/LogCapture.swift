package import AmodbProxy
import Synchronization

/// Collects the lines a `ProxyLogger` writes, so tests can read them.
package final class LogCapture: Sendable {
    private let lines = Mutex<[String]>([])

    package init() {}

    /// A sink for `ProxyLogger(sink:)`.
    package var sink: ProxyLogger.Sink {
        { [self] line in lines.withLock { $0.append(line) } }
    }

    /// Every line so far.
    package var all: [String] { lines.withLock { $0 } }
}
