import Dispatch
import Glibc
import Synchronization

/// Writes log lines to a file descriptor (stdout, stderr) in batches: a line is a copy
/// into a buffer under a short lock, and the buffer goes out with one `write(2)` when it
/// is large or every 100 ms, so logging costs no system call per request.
public final class LineWriter: Sendable {
    private let fd: Int32
    private let buffer = Mutex<[UInt8]>([])
    private let queue = DispatchQueue(label: "amodb-proxy.log-writer")
    private static let flushBytes = 64 * 1024

    /// Standard output (the access log).
    public static let standardOutput = LineWriter(fd: 1)
    /// Standard error (events and errors).
    public static let standardError = LineWriter(fd: 2)

    private init(fd: Int32) {
        self.fd = fd
        scheduleFlush()
    }

    /// Queues one line (a newline is added).
    public func write(_ line: String) {
        let full = buffer.withLock { buffer -> Bool in
            buffer.append(contentsOf: line.utf8)
            buffer.append(UInt8(ascii: "\n"))
            return buffer.count >= Self.flushBytes
        }
        if full { queue.async { self.flush() } }
    }

    /// Writes out what is queued now (also at exit).
    public func flush() {
        let bytes = buffer.withLock { buffer -> [UInt8] in
            defer { buffer.removeAll(keepingCapacity: true) }
            return buffer
        }
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                return   // stdout closed or full disk: logging must never take the server down
            }
            offset += written
        }
    }

    private func scheduleFlush() {
        queue.asyncAfter(deadline: .now() + .milliseconds(100)) { [self] in
            flush()
            scheduleFlush()
        }
    }
}
