public import AmodbProxy
import Synchronization

/// Collects the lines a `ProxyLogger` writes, so tests can read them.
public final class LogCapture: Sendable {
    private let lines = Mutex<[String]>([])

    public init() {}

    /// A sink for `ProxyLogger(sink:)`.
    public var sink: ProxyLogger.Sink {
        { [self] line in lines.withLock { $0.append(line) } }
    }

    /// Every line so far.
    public var all: [String] { lines.withLock { $0 } }
}
