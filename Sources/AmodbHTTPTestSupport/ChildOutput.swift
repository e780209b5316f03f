import Dispatch
import Glibc
import Synchronization

/// The read end of a pipe from a `ChildProcess`, drained in the background from the moment the
/// child starts (so a chatty child never stalls on a full pipe): callers look at the lines as
/// they come (`lines`, `text`) or wait for all of it (`readToEnd()`).
///
/// `@unchecked Sendable`: `source` is set once in `start()`, before the handle is returned to
/// anyone, and is then only cancelled; everything it reads is behind `Collected`'s lock.
public final class ChildOutput: @unchecked Sendable {
    /// What has been read so far.
    fileprivate struct State {
        var bytes: [UInt8] = []
        /// Complete lines, without their `\n`.
        var lines: [String] = []
        /// Where in `bytes` the line being written starts.
        var lineStart = 0
        var finished = false
    }

    /// The bytes read, shared with the read source's handlers.
    private final class Collected: Sendable {
        let state = Mutex(State())
        /// Left once end of file is read (or reading fails), for `readToEnd()`.
        let done = DispatchGroup()
    }

    private let descriptor: Int32
    private let collected = Collected()
    private var source: (any DispatchSourceRead)?

    /// One serial queue for every child's output: reading is brief, and a thread per pipe is not needed.
    private static let queue = DispatchQueue(label: "amodb.child-output")

    /// Reads `descriptor`, the read end of a pipe, once started; from then on it owns and closes it.
    init(reading descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Starts reading; the descriptor is closed when end of file is read. Called once, right
    /// after the spawn (a handle whose spawn failed is never started, and closes nothing).
    func start() {
        collected.done.enter()
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: Self.queue)
        let descriptor = descriptor
        let collected = collected
        // The handlers hold the source until it is cancelled (at end of file, or in `deinit`).
        source.setEventHandler {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    Self.append(buffer[..<count], to: collected)
                } else if count == -1 && errno == EINTR {
                    continue
                } else if count == -1 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                    return
                } else {
                    source.cancel()   // end of file, or the pipe failed: nothing more will come
                    return
                }
            }
        }
        source.setCancelHandler {
            close(descriptor)
            collected.state.withLock { $0.finished = true }
            collected.done.leave()
        }
        self.source = source
        source.resume()
    }

    private static func append(_ chunk: ArraySlice<UInt8>, to collected: Collected) {
        collected.state.withLock { state in
            let scanFrom = state.bytes.count
            state.bytes += chunk
            var index = scanFrom
            while let newline = state.bytes[index...].firstIndex(of: UInt8(ascii: "\n")) {
                state.lines.append(String(decoding: state.bytes[state.lineStart..<newline], as: UTF8.self))
                state.lineStart = newline + 1
                index = newline + 1
            }
        }
    }

    /// The complete lines read so far (a last line without `\n` is not included).
    public var lines: [String] { collected.state.withLock { $0.lines } }

    /// Everything read so far, as UTF-8 text.
    public var text: String { collected.state.withLock { String(decoding: $0.bytes, as: UTF8.self) } }

    /// Whether end of file has been read: the child, and whatever it passed the pipe to, closed it.
    public var isFinished: Bool { collected.state.withLock { $0.finished } }

    /// Blocks until end of file and returns every byte.
    public func readToEnd() -> [UInt8] {
        collected.done.wait()
        return collected.state.withLock { $0.bytes }
    }

    /// Stops reading if the pipe is still open (its cancel handler closes the descriptor).
    deinit {
        source?.cancel()
    }
}
