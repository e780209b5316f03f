import AmodbSockets
import Dispatch

/// One TCP connection's fd and its two Dispatch sources, confined to the owning
/// connection's queue. The fd is closed in exactly one place: the cancel handler of
/// whichever source is cancelled last (closing earlier would let the kernel hand the
/// number to another socket while a source still watches it).
///
/// `@unchecked Sendable`: the mutable flags are touched only on `queue`; the sources'
/// handlers run there too.
final class RedisSocket: @unchecked Sendable {
    /// The socket's file descriptor; valid until `close()`'s cancel handlers have run.
    let fd: Int32
    private let queue: DispatchQueue
    private let readSource: any DispatchSourceRead
    private let writeSource: any DispatchSourceWrite
    private var readSuspended = true
    private var writeSuspended = true
    private var liveSources = 2
    private var closed = false

    /// Wraps `fd`; neither source runs until `startReading()` or `watchWritable(true)`.
    init(
        fd: Int32, queue: DispatchQueue, onReadable: @escaping @Sendable () -> Void,
        onWritable: @escaping @Sendable () -> Void
    ) {
        self.fd = fd
        self.queue = queue
        readSource = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        writeSource = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
        readSource.setEventHandler(handler: onReadable)
        writeSource.setEventHandler(handler: onWritable)
        readSource.setCancelHandler { [self] in sourceCancelled() }
        writeSource.setCancelHandler { [self] in sourceCancelled() }
    }

    /// Starts delivering readability (once connected).
    func startReading() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard readSuspended, !closed else { return }
        readSuspended = false
        readSource.resume()
    }

    /// Delivers writability while `on`: during a non-blocking connect, and while sends would block.
    func watchWritable(_ on: Bool) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !closed, on == writeSuspended else { return }
        writeSuspended = !on
        if on { writeSource.resume() } else { writeSource.suspend() }
    }

    /// Cancels both sources; the fd is closed when both have stopped. Idempotent.
    func close() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !closed else { return }
        closed = true
        readSource.cancel()
        writeSource.cancel()
        // A suspended source never runs its cancel handler, and releasing one traps: resume it.
        if readSuspended {
            readSuspended = false
            readSource.resume()
        }
        if writeSuspended {
            writeSuspended = false
            writeSource.resume()
        }
    }

    private func sourceCancelled() {
        dispatchPrecondition(condition: .onQueue(queue))
        liveSources -= 1
        if liveSources == 0 { Syscalls.close(fd) }
    }
}
