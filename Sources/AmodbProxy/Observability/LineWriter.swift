import AmodbSockets
import Dispatch
import Foundation
import Glibc
import Synchronization

/// Writes log lines to a file descriptor (stdout, stderr) in batches: a line is a copy
/// into a buffer under a short lock, and a thread of the writer's own takes the buffer
/// out with one `write(2)` when it holds 16 KiB or every 100 ms, so logging costs no
/// system call per request.
///
/// Whoever reads the descriptor may stop (a full pipe, a blocked logging driver). The
/// writing thread then blocks in `write(2)`, and only it: it is not a Dispatch worker,
/// and an event loop only ever appends. What waits is bounded by `maxBytes`; beyond
/// it lines are dropped and counted (`amodb_proxy_log_lines_dropped_total`), and a
/// note says so on standard error at most once a minute.
package final class LineWriter: Sendable {
    private struct State {
        /// Lines waiting for the writing thread.
        var pending: [UInt8] = []
        /// Bytes the writing thread took and has not finished writing.
        var inFlight = 0
        /// Lines dropped since the last note, and in all.
        var droppedSinceNote = 0
        var droppedTotal = 0
        /// When the last note was written (monotonic nanoseconds), if ever.
        var lastNote: UInt64?
        /// The time lines written in place are stamped with: its calendar part is
        /// formatted once a second under the lock every line takes anyway.
        var time = LogTime()
        /// The writing thread's id, once it runs.
        var threadID: Int32?
    }

    private let fd: Int32
    private let name: String
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    /// Most bytes waiting (pending and being written) before lines are dropped.
    let maxBytes: Int
    /// Where drop notes go; `nil`: this writer's own buffer, past the bound.
    private let noteSink: (@Sendable (String) -> Void)?
    /// Pending bytes that wake the writing thread. Small: the thread's `write(2)` copies
    /// them on whichever core it gets, often an event loop's, and a short copy holds that
    /// loop up briefly; and both buffers then stay small enough to be reused from the
    /// heap, not mapped afresh (and faulted in, page by page) each time they grow.
    private static let flushBytes = 16 * 1024
    /// The most capacity a written buffer keeps for reuse; a larger one, left by a backlog
    /// (a stalled reader), is freed.
    private static let keptCapacity = 4 * flushBytes
    private static let noteInterval: UInt64 = 60 * 1_000_000_000
    /// The writing thread's nice value (`run`).
    static let writerNice: Int32 = 10

    /// Standard output (the access log).
    package static let standardOutput = LineWriter(
        fd: 1, name: "standard output", noteSink: { LineWriter.standardError.writeNote($0) })
    /// Standard error (events and errors).
    package static let standardError = LineWriter(fd: 2, name: "standard error")

    /// A writer to `fd` (which it never closes), holding at most `maxBytes` (4 MiB) unwritten.
    init(fd: Int32, name: String, maxBytes: Int = 4 * 1024 * 1024, noteSink: (@Sendable (String) -> Void)? = nil) {
        self.fd = fd
        self.name = name
        self.maxBytes = maxBytes
        self.noteSink = noteSink
        let thread = Thread { [self] in run() }
        thread.name = "amodb-proxy.log-writer"
        thread.start()
    }

    /// Queues one line (a newline is added), or drops it when too much is waiting.
    /// Never blocks beyond a short lock.
    package func write(_ line: String) {
        write { pending, _ in pending.append(contentsOf: line.utf8) }
    }

    /// Queues one line that `render` appends to the pending bytes in place (without its
    /// newline), with the writer's clock for its time: a line costs no allocation and no
    /// lock but this one. Past `maxBytes` the line is taken back out and counted dropped.
    /// `render` runs under the writer's lock: it must not log.
    func write(rendering render: (inout [UInt8], inout LogTime) -> Void) {
        let (wakeWriter, note) = state.withLock { state -> (Bool, String?) in
            let start = state.pending.count
            render(&state.pending, &state.time)
            state.pending.append(UInt8(ascii: "\n"))
            guard state.pending.count + state.inFlight <= maxBytes else {
                state.pending.removeSubrange(start...)
                state.droppedSinceNote += 1
                state.droppedTotal += 1
                let now = DispatchTime.now().uptimeNanoseconds
                if let last = state.lastNote, now - last < Self.noteInterval { return (false, nil) }
                state.lastNote = now
                defer { state.droppedSinceNote = 0 }
                return (false, noteLine(dropped: state.droppedSinceNote))
            }
            return (state.pending.count >= Self.flushBytes, nil)
        }
        if wakeWriter { wake.signal() }
        if let note {
            if let noteSink { noteSink(note) } else { writeNote(note) }
        }
    }

    /// Lines dropped so far because too much was waiting.
    package var droppedLines: Int {
        state.withLock { $0.droppedTotal }
    }

    /// The writing thread's id once it has started (its `/proc/self/task` entry).
    var threadID: Int32? {
        state.withLock { $0.threadID }
    }

    /// Bytes waiting now, pending or being written.
    var waitingBytes: Int {
        state.withLock { $0.pending.count + $0.inFlight }
    }

    /// Writes out what is queued, waiting at most `seconds` (at exit: a stalled reader
    /// must not keep the process from exiting).
    package func flush(within seconds: Double = 2) {
        let deadline = DispatchTime.now() + seconds
        wake.signal()
        while waitingBytes > 0, DispatchTime.now() < deadline {
            wake.signal()
            usleep(2000)
        }
    }

    /// A note past the bound: one line a minute at most, so it cannot grow the buffer much.
    private func writeNote(_ line: String) {
        state.withLock { state in
            state.pending.append(contentsOf: line.utf8)
            state.pending.append(UInt8(ascii: "\n"))
        }
    }

    private func noteLine(dropped: Int) -> String {
        LogFormat.json.line([
            ("time", .string(LogTime.now)), ("level", .string("warning")),
            ("message", .string("log lines dropped: \(name) is not being read fast enough")),
            ("dropped", .integer(dropped)), ("limit_bytes", .integer(maxBytes)),
        ])
    }

    /// The writing thread: takes what is pending, writes it (blocking, on this thread
    /// only), and sleeps until woken or 100 ms pass.
    ///
    /// It runs at a lower priority than the event loops (nice 10): on a slow or busy disk
    /// one `write(2)` of a backlog can take tens of milliseconds of the core in the page
    /// cache, and at the same priority the scheduler let it keep the core of an event
    /// loop that long (a thread that mostly sleeps is owed time), stalling every request
    /// on that loop. Against a loop on Dispatch's user-initiated queue (nice -2) it still
    /// gets ~6% of a busy core, more than twice what writing costs; when it cannot keep
    /// up, lines are dropped and counted, as above.
    private func run() {
        Syscalls.lowerThreadPriority(nice: Self.writerNice)
        let threadID = Syscalls.threadID()
        state.withLock { $0.threadID = threadID }
        var outgoing: [UInt8] = []
        while true {
            _ = wake.wait(timeout: .now() + .milliseconds(100))
            state.withLock { state in
                swap(&state.pending, &outgoing)
                state.inFlight = outgoing.count
            }
            guard !outgoing.isEmpty else { continue }
            writeAll(outgoing)
            outgoing.removeAll(keepingCapacity: outgoing.capacity <= Self.keptCapacity)
            state.withLock { $0.inFlight = 0 }
        }
    }

    private func writeAll(_ bytes: [UInt8]) {
        var pending = bytes
        while !pending.isEmpty {
            // The array is lent to `write(2)` as a pointer for the call alone.
            let written = Glibc.write(fd, pending, pending.count)
            if written < 0 {
                if errno == EINTR { continue }
                return  // stdout closed or full disk: logging must never take the server down
            }
            if written == pending.count { return }
            pending.removeFirst(written)  // a short write (a slow pipe, a signal): rare, so is the copy
        }
    }
}
