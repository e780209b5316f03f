import Dispatch
import Foundation
import Glibc
import Synchronization

/// The read end of a pipe from a `ChildProcess`, drained in the background from the moment the
/// child starts (so a chatty child never stalls on a full pipe): callers look at the lines as
/// they come (`lines`, `text`) or wait for all of it (`readToEnd()`).
///
/// `@unchecked Sendable`: its stored properties never change after `init`; everything it reads
/// is behind `Collected`'s lock.
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

    /// Reads `descriptor`, the read end of a pipe, once started; from then on it owns and closes it.
    init(reading descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Starts reading; the descriptor is closed when end of file is read. Called once, right
    /// after the spawn (a handle whose spawn failed is never started, and closes nothing).
    ///
    /// A thread of its own reads the pipe with blocking reads, not a Dispatch read source:
    /// libdispatch's epoll bookkeeping on Linux can be corrupted by sources set up and torn
    /// down on many threads at once (swift-corelibs-libdispatch#949; the manager thread then
    /// crashes in `_dispatch_event_loop_drain`), and a test run starts and stops many children
    /// beside many servers. A thread per child costs nothing in tests.
    func start() {
        collected.done.enter()
        let descriptor = descriptor
        let collected = collected
        let reader = Thread {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    Self.append(buffer[..<count], to: collected)
                } else if count == -1 && errno == EINTR {
                    continue
                } else {
                    break  // end of file, or the pipe failed: nothing more will come
                }
            }
            close(descriptor)
            collected.state.withLock { $0.finished = true }
            collected.done.leave()
        }
        reader.stackSize = 1 << 18
        reader.start()
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
}
