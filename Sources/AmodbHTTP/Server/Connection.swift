import AmodbSockets
import Dispatch
import Glibc
import Synchronization

/// What a connection needs from its server.
protocol ConnectionOwner: AnyObject, Sendable {
    var responder: any HTTPResponder { get }
    var limits: HTTPLimits { get }
    var timeouts: HTTPTimeouts { get }
    /// How the application words the answers the server gives itself.
    var errorResponse: HTTPResponse.ErrorMaker { get }
    /// Where connections report what tests and operators observe.
    var probe: ServerProbe { get }
    /// Called once, on the connection's queue, after its fd was closed.
    func connectionDidClose(_ connection: Connection)
}

/// One client connection: the I/O around a `ConnectionStateMachine`. Events (readable,
/// reported by its `EventLoop`; writable and the timer, by Dispatch sources; answers
/// delivered; shutdown) go to the machine; the actions it returns are performed here, and
/// nothing else is decided here.
///
/// "Read once, parse every pipelined request, write once": the answers a responder gives
/// at once (cache hits) are handed back together, and written with one `sendmsg`.
///
/// `@unchecked Sendable`: every mutable property is touched only on `queue` (its event
/// loop's serial queue, shared with the loop's other connections); entry points assert it.
/// Responders deliver through `queue.async`.
final class Connection: @unchecked Sendable {
    let fd: Int32
    let peer: String
    /// The peer's port: with `peer`, what identifies this connection to a test.
    let peerPort: Int
    let queue: DispatchQueue
    private let loop: EventLoop
    private let owner: any ConnectionOwner
    // The mutable state below is touched only on `queue`, and `perform` is never re-entered
    // (answers given later come back through `queue.async`), so no two accesses to one of
    // these can overlap: they skip the runtime's exclusivity check, which would be paid on
    // every access, a dozen times per request.
    @exclusivity(unchecked) private var machine: ConnectionStateMachine

    @exclusivity(unchecked) private var writeSource: (any DispatchSourceWrite)?
    private let timer: any DispatchSourceTimer
    /// Whether the loop reports this connection's input (false while reading is paused).
    @exclusivity(unchecked) private var watched = false
    /// The reference the loop's reports rely on, from `start` until `close`.
    @exclusivity(unchecked) private var retainedForLoop: Unmanaged<Connection>?
    @exclusivity(unchecked) private var writeSuspended = true
    @exclusivity(unchecked) private var liveSources = 0
    /// Set by `close`: the sources are cancelled, and no action after it is performed.
    @exclusivity(unchecked) private var closed = false
    /// Answers given at once while performing, kept between events so that its storage is
    /// reused (`perform` is never re-entered: answers given later arrive through `queue`).
    @exclusivity(unchecked) private var spareReady: [(sequence: Int, response: HTTPResponse)] = []
    /// The storage of the actions being performed, kept between events for the same reason.
    @exclusivity(unchecked) private var spareWork: [ConnectionStateMachine.Action] = []

    /// How this connection may give up its slot to a newcomer, for other threads to read:
    /// 0 while busy, else `since << 2 | kind` (see `ConnectionDeadlines.Reclaimable`).
    private let reclaimable = Atomic<UInt64>(0)
    /// Set while the server has chosen this connection to close for a newcomer.
    private let evictionClaimed = Atomic<Bool>(false)
    // These three have one writer, this connection's queue, and are read from anywhere: they
    // grow by a relaxed load and store (`increase(by:)`), not a locked add per request
    // (docs/performance.md, "Invariants": counter lanes).
    /// Bytes read off the socket so far (package-visible, so tests wait on it instead of sleeping).
    private let received = Atomic<Int>(0)
    /// Reads that brought bytes, and `sendmsg` calls: what shows that pipelined requests
    /// read together are answered with one write.
    private let reads = Atomic<Int>(0)
    private let sends = Atomic<Int>(0)

    init(fd: Int32, peer: String, peerPort: Int, owner: any ConnectionOwner, loop: EventLoop) {
        self.fd = fd
        self.peer = peer
        self.peerPort = peerPort
        self.owner = owner
        self.machine = ConnectionStateMachine(
            limits: owner.limits, timeouts: owner.timeouts, errorResponse: owner.errorResponse, peerAddress: peer,
            openedAt: .now())
        self.loop = loop
        self.queue = loop.queue
        self.timer = DispatchSource.makeTimerSource(queue: loop.queue)
    }

    /// Bytes this connection has read from its peer.
    var bytesReceived: Int { received.load(ordering: .relaxed) }

    /// Reads that brought bytes, and `sendmsg` calls, so far.
    var syscallCounts: (reads: Int, sends: Int) { (reads.load(ordering: .relaxed), sends.load(ordering: .relaxed)) }

    /// Starts reading; call once, right after accepting, before anyone else can reach the
    /// connection (its state is set up here, then belongs to `queue`: resuming the timer and
    /// joining the loop's readiness set publish it to the handlers that run there).
    func start() {
        timer.setEventHandler { [unowned self] in perform(machine.deadlinePassed(at: .now())) }
        timer.setCancelHandler { [self] in sourceCancelled() }
        liveSources = 1
        // Not on `queue` yet: the only action of a start (the first deadline) is taken here.
        for case .armTimer(let deadline) in machine.start() {
            timer.schedule(deadline: deadline, leeway: .milliseconds(100))
        }
        publishReclaimable()
        retainedForLoop = Unmanaged.passRetained(self)
        watched = true
        timer.resume()
        do {
            try loop.watch(self)
        } catch {
            // No room in the kernel's readiness sets: the connection cannot be served.
            queue.async { [self] in
                watched = false
                perform(machine.peerLeft())
            }
        }
    }

    /// The socket has input (or its end, or an error): reported by the loop, on `queue`.
    func readable() {
        perform(machine.readable())
    }

    /// Stops reading new requests: answers those in flight (with `Connection: close`), then closes.
    func beginShutdown() {
        queue.async { [self] in perform(machine.shutdownRequested(at: .now())) }
    }

    /// Closes at once, whatever is in flight (end of the shutdown grace period).
    func forceClose() {
        queue.async { [self] in perform(machine.closeNow(reset: false)) }
    }

    // MARK: Performing actions

    /// Performs the machine's actions, and those that follow from them, until none is left.
    /// Answers given at once are gathered and handed back together, and the output is
    /// written once they are all in.
    private func perform(_ first: consuming [ConnectionStateMachine.Action]) {
        dispatchPrecondition(condition: .onQueue(queue))
        // Worked on as locals, then put back: their storage is reused from pass to pass.
        var work: [ConnectionStateMachine.Action] = []
        var ready: [(sequence: Int, response: HTTPResponse)] = []
        swap(&work, &spareWork)
        swap(&ready, &spareReady)
        // The loop's head storage, for the answers written in this pass.
        swap(&machine.headStorage, &loop.headStorage)
        defer {
            // Storage grown by a burst is not kept (see `ConnectionStateMachine.recycle`).
            if work.capacity > ConnectionStateMachine.keptActionCapacity { work = [] }
            if ready.capacity > ConnectionStateMachine.keptQueueCapacity { ready = [] }
            swap(&work, &spareWork)
            swap(&ready, &spareReady)
            swap(&machine.headStorage, &loop.headStorage)
        }
        absorb(first, into: &work)
        // One clock read for the pass: what it reads, writes and answers happens within
        // microseconds, and the machine's deadlines are seconds.
        let now = DispatchTime.now()
        var wantsWrite = false
        while true {
            var index = 0
            while index < work.count {
                let action = work[index]
                index += 1
                if closed { continue }
                switch action {
                case .read(let limit):
                    absorb(read(upTo: limit, at: now), into: &work)
                case .discardInput:
                    absorb(discardInput(), into: &work)
                case .respond(let sequence):
                    guard let request = machine.takeRequest(sequence) else { continue }
                    let immediate = owner.responder.respond(
                        to: request, context: ResponderContext(loopIndex: loop.index)
                    ) { [self] in
                        { [self] response in
                            queue.async {
                                var delivered: [(sequence: Int, response: HTTPResponse)] = [(sequence, response)]
                                self.perform(self.machine.responsesReady(&delivered, at: .now()))
                            }
                        }
                    }
                    if let immediate { ready.append((sequence, immediate)) }
                case .refused(let status):
                    owner.responder.didRefuse(status: status, peerAddress: peer, head: machine.takeRefusedHead())
                case .write:
                    wantsWrite = true
                case .waitForWritable:
                    waitUntilWritable()
                case .stopWaitingForWritable:
                    if !writeSuspended, let writeSource {
                        writeSource.suspend()
                        writeSuspended = true
                    }
                case .pauseReading:
                    if watched {
                        loop.unwatch(self)
                        watched = false
                    }
                case .resumeReading:
                    if !watched {
                        do {
                            try loop.watch(self)
                            watched = true
                        } catch {
                            absorb(machine.peerLeft(), into: &work)
                        }
                    }
                case .armTimer(let deadline):
                    timer.schedule(deadline: deadline, leeway: .milliseconds(100))
                case .shutdownWrite:
                    Syscalls.shutdownWrite(fd)
                case .close(let reset):
                    close(reset: reset)
                }
            }
            work.removeAll(keepingCapacity: true)
            if !ready.isEmpty {
                absorb(machine.responsesReady(&ready, at: now), into: &work)
            } else if wantsWrite {
                wantsWrite = false
                absorb(write(at: now), into: &work)
            } else {
                break
            }
        }
        publishReclaimable()
    }

    /// Queues actions the machine handed out, and hands their array back to it for reuse.
    private func absorb(
        _ handedOut: consuming [ConnectionStateMachine.Action], into work: inout [ConnectionStateMachine.Action]
    ) {
        var actions = consume handedOut
        work.append(contentsOf: actions)
        machine.recycle(&actions)
    }

    /// One read into the loop's read buffer, reported to the machine.
    private func read(upTo limit: Int, at now: DispatchTime) -> [ConnectionStateMachine.Action] {
        let buffer = UnsafeMutableRawBufferPointer(rebasing: loop.readBuffer[..<min(limit, loop.readBuffer.count)])
        do {
            switch try Syscalls.receive(fd, into: buffer) {
            case .wouldBlock:
                return []
            case .done(0):
                return machine.endOfInput(at: now)
            case .done(let count):
                reads.increase(by: 1)
                let actions = machine.bytesRead(UnsafeRawBufferPointer(rebasing: buffer[..<count]), at: now)
                // Published before the count, so whoever sees the bytes read sees their effect.
                publishReclaimable()
                received.increase(by: count)
                return actions
            }
        } catch {
            return machine.peerLeft()  // ECONNRESET and friends
        }
    }

    /// Reads and drops the peer's leftovers while lingering.
    private func discardInput() -> [ConnectionStateMachine.Action] {
        while true {
            switch try? Syscalls.receive(fd, into: loop.readBuffer) {
            case .done(let count) where count > 0:
                received.increase(by: count)
            case .wouldBlock:
                return []
            default:
                return machine.peerLeft()  // end of stream or error: the peer is done
            }
        }
    }

    /// One `sendmsg` of the pending output, reported to the machine.
    private func write(at now: DispatchTime) -> [ConnectionStateMachine.Action] {
        guard !machine.isClosed else { return [] }
        owner.probe.noteUnsent(machine.pendingOutput.unsentBytes)
        sends.increase(by: 1)
        do {
            switch try machine.pendingOutput.send(to: fd) {
            case .done(let sent): return machine.didWrite(sent, at: now)
            case .wouldBlock: return machine.writeWouldBlock(at: now)
            }
        } catch {
            return machine.peerLeft()  // EPIPE / ECONNRESET: the peer left
        }
    }

    private func waitUntilWritable() {
        if writeSource == nil {
            let source = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
            source.setEventHandler { [unowned self] in perform([.write]) }
            source.setCancelHandler { [self] in sourceCancelled() }
            writeSource = source
            liveSources += 1
        }
        if writeSuspended, let writeSource {
            writeSource.resume()
            writeSuspended = false
        }
    }

    // MARK: Making room

    /// Publishes, for the accepting thread, whether and since when this connection could
    /// be closed to make room. Busy connections (an answer owed or unsent) never are.
    private func publishReclaimable() {
        var value: UInt64 = 0
        if let (kind, since) = machine.reclaimable() {
            // Lingering ones count as closing since forever: they go first.
            value = (kind == .closing ? 0 : since.uptimeNanoseconds << 2) | kind.rawValue
        }
        reclaimable.store(value, ordering: .relaxed)
    }

    /// How this connection ranks for closing when the server is full, as last published
    /// (nil: busy). Any thread.
    var reclaimableKind: ConnectionDeadlines.Reclaimable? {
        ConnectionDeadlines.Reclaimable(rawValue: reclaimable.load(ordering: .relaxed) & 3)
    }

    /// Whether this connection may be closed for a newcomer now, and since when (uptime
    /// nanoseconds): slow ones only once slow for `slowAfter` nanoseconds. Any thread.
    func reclaimability(now: UInt64, slowAfter: UInt64) -> (kind: ConnectionDeadlines.Reclaimable, since: UInt64)? {
        let value = reclaimable.load(ordering: .relaxed)
        guard value != 0, let kind = ConnectionDeadlines.Reclaimable(rawValue: value & 3) else { return nil }
        let since = value >> 2
        if kind == .slow, now < since + slowAfter { return nil }
        return (kind, since)
    }

    /// Claims this connection for eviction, once: false if another newcomer already has.
    func claimForEviction() -> Bool {
        evictionClaimed.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged
    }

    /// Closes this connection to make room, if it is still idle, slow or closing once its
    /// queue gets to it. A slow peer is reset, freeing its buffers at once (nginx's
    /// `reset_timedout_connection`); an idle keep-alive one gets an orderly close, which
    /// clients expect of keep-alive connections and retry on.
    func evict() {
        queue.async { [self] in
            defer { evictionClaimed.store(false, ordering: .relaxed) }
            guard let (kind, _) = machine.reclaimable() else { return }
            owner.probe.noteEviction()
            perform(machine.closeNow(reset: kind == .slow))
        }
    }

    // MARK: Closing

    /// The one place the connection ends. It leaves the loop's readiness set at once; the
    /// fd itself is closed once every Dispatch source on it has been cancelled (Dispatch's
    /// rule for fds).
    private func close(reset: Bool) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !closed else { return }
        closed = true
        if reset { Syscalls.resetOnClose(fd) }
        reclaimable.store(0, ordering: .relaxed)
        if watched {
            loop.unwatch(self)
            watched = false
        }
        if let retainedForLoop {
            // Let go after the round being served, which may still hold this connection's token.
            self.retainedForLoop = nil
            queue.async { retainedForLoop.release() }
        }
        writeSource?.cancel()
        if writeSuspended {
            writeSource?.resume()
            writeSuspended = false
        }
        timer.cancel()
    }

    private func sourceCancelled() {
        liveSources -= 1
        guard liveSources == 0 else { return }
        Syscalls.close(fd)
        owner.connectionDidClose(self)
    }
}
