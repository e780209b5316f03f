import AmodbSockets
import Dispatch

/// One event loop: a serial queue, and one readiness set (an epoll set of our own) that
/// watches every connection of the loop, itself watched by a single Dispatch read source
/// on that queue.
///
/// Why not a Dispatch read source per connection: on Linux each is registered one-shot, so
/// every request cost two `epoll_ctl` (disarm, re-arm), an `ioctl(FIONREAD)` and a hand-off
/// from Dispatch's manager thread to a worker: context switches on the request path, most
/// of the kernel time. Here connections are watched level-triggered, so
/// nothing is re-armed per request; one wake-up of the loop takes every ready connection
/// (`epoll_wait`, up to `batchSize` a round) and keeps going while more are ready, as
/// nginx's loop does, so a busy loop serves many requests per wake-up.
///
/// `@unchecked Sendable`: the set's fd is only used through thread-safe syscalls, and
/// the tokens it reports and the read buffer are only used on `queue`.
final class EventLoop: @unchecked Sendable {
    /// Most ready connections taken per `epoll_wait`.
    static let batchSize = 64
    /// Most `epoll_wait` rounds per wake-up, so that a loop that is never idle still lets
    /// the other work on its queue (answers delivered, timers) run between rounds.
    static let maxRounds = 16
    /// How long a wake-up that served connections waits for the next to be ready before it
    /// gives its queue back. Without it, a loop that keeps up with its clients finds the set
    /// empty between two requests, returns, and each next request costs a hand-off: Dispatch's
    /// manager thread sees the set readable and wakes a worker for the loop's queue (two
    /// context switches, where nginx's loop blocks in `epoll_wait` and is woken once). Short,
    /// and the worker blocks in the kernel, not spinning: an idle loop pays it once per burst,
    /// and other work on the queue waits at most `maxRounds` of it.
    static let lingerNanoseconds = 50_000

    /// The serial queue every connection of this loop runs on.
    let queue: DispatchQueue
    /// Where the loop's connections read, one at a time, on `queue`: a connection keeps only
    /// the bytes it has not parsed yet (so an idle one holds no read buffer), and a read
    /// allocates nothing (a temporary buffer per read was a 16 KB `malloc` per request).
    let readBuffer: UnsafeMutableRawBufferPointer
    /// The storage answer heads are written to, lent to the connection being served
    /// (`ConnectionStateMachine.headStorage`), on `queue` only: reused from answer to answer
    /// once the last head written there was sent, and held by no idle connection.
    @exclusivity(unchecked) var headStorage: [UInt8] = []
    private let epollFD: Int32
    private let source: any DispatchSourceRead
    private let probe: ServerProbe

    /// Its position among the server's loops (0 ..< `HTTPServer.eventLoopCount()`): what a
    /// responder is told answers on its queue (`ResponderContext.loopIndex`).
    let index: Int

    /// Loop number `index`, whose queue (`label`) targets `target`; reports its wake-ups to `probe`.
    init(index: Int, label: String, target: DispatchQueue, probe: ServerProbe) throws(SyscallError) {
        let queue = DispatchQueue(label: label, target: target)
        self.index = index
        let epollFD = try Syscalls.epollCreate()
        self.queue = queue
        self.epollFD = epollFD
        self.probe = probe
        readBuffer = .allocate(byteCount: ConnectionStateMachine.readChunkBytes, alignment: 1)
        source = DispatchSource.makeReadSource(fileDescriptor: epollFD, queue: queue)
        source.setEventHandler { [weak self] in self?.serveReady() }
        source.setCancelHandler { Syscalls.close(epollFD) }
        source.resume()
    }

    deinit {
        source.cancel()
        readBuffer.deallocate()  // connections hold their loop: none is left to read into it
    }

    /// Starts reporting `connection` to its `readable()` while it has input. Any thread.
    /// The caller keeps the connection alive until `unwatch`, and the events already taken
    /// are handled on `queue` (see `serveReady`).
    func watch(_ connection: Connection) throws(SyscallError) {
        try Syscalls.epollAdd(epollFD, connection.fd, token: Self.token(connection))
    }

    /// Stops reporting `connection` (backpressure, or closing): before its fd is closed.
    func unwatch(_ connection: Connection) {
        Syscalls.epollRemove(epollFD, connection.fd)
    }

    /// Serves every ready connection, round after round while some are ready, lingering
    /// briefly for more once it has served some (`lingerNanoseconds`).
    private func serveReady() {
        dispatchPrecondition(condition: .onQueue(queue))
        withUnsafeTemporaryAllocation(of: UInt64.self, capacity: Self.batchSize) { tokens in
            var served = false
            for _ in 0..<Self.maxRounds {
                let count = Syscalls.epollWait(
                    epollFD, into: tokens, waitingAtMost: served ? Self.lingerNanoseconds : 0)
                guard count > 0 else { return }
                served = true
                probe.noteReady(count)
                for index in 0..<count {
                    Self.connection(tokens[index]).readable()
                }
            }
        }
    }

    /// The token a connection is reported as: its address. A connection is unwatched on its
    /// queue before it lets go of itself (`Connection.close`), and a token is only
    /// dereferenced on that queue, in the round that reported it.
    private static func token(_ connection: Connection) -> UInt64 {
        UInt64(UInt(bitPattern: Unmanaged.passUnretained(connection).toOpaque()))
    }

    private static func connection(_ token: UInt64) -> Connection {
        // Tokens are only ever made by `token(_:)` from a live connection: never null.
        Unmanaged<Connection>.fromOpaque(UnsafeRawPointer(bitPattern: UInt(token))!).takeUnretainedValue()
    }
}
