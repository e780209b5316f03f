import Dispatch
import Glibc
import Synchronization

/// What a connection needs from its server.
protocol ConnectionOwner: AnyObject, Sendable {
    var responder: any HTTPResponder { get }
    var limits: HTTPLimits { get }
    var timeouts: HTTPTimeouts { get }
    /// Where connections report what tests and operators observe.
    var probe: ServerProbe { get }
    /// Called once, on the connection's queue, after its fd was closed.
    func connectionDidClose(_ connection: Connection)
}

/// One client connection: reads and parses requests, hands them to the responder,
/// writes responses back in request order (pipelining), enforces limits and deadlines.
///
/// `@unchecked Sendable`: every mutable property is touched only on `queue` (a serial
/// event-loop queue this connection shares with others); entry points assert it.
/// Responders deliver through `queue.async`.
final class Connection: @unchecked Sendable {
    /// One request's place in the response order.
    private struct Slot {
        let sequence: Int
        let isHead: Bool
        let keepAlive: Bool
        let version: HTTPVersion
        var response: HTTPResponse?
    }

    /// Why the connection stopped reading requests.
    private enum Phase {
        /// Reading and answering requests.
        case open
        /// No more requests are read; the pending ones are answered, then the connection closes.
        case draining
        /// Everything is sent and our side shut down; the peer's leftovers are read and dropped
        /// for a moment, so our last response is not lost to a reset (RFC 9112 §9.6).
        case lingering(until: DispatchTime)
        case closed
    }

    let fd: Int32
    let peer: String
    /// The peer's port: with `peer`, what identifies this connection to a test.
    let peerPort: Int
    let queue: DispatchQueue
    private let owner: any ConnectionOwner
    private let limits: HTTPLimits
    private let timeouts: HTTPTimeouts
    private var decoder: RequestDecoder
    private var phase = Phase.open

    private var readSource: (any DispatchSourceRead)?
    private var writeSource: (any DispatchSourceWrite)?
    private let timer: any DispatchSourceTimer
    private var readSuspended = false
    private var writeSuspended = true
    private var liveSources = 0

    private var inbound: [UInt8] = []
    private var readIndex = 0
    private var slots: [Slot] = []
    private var nextSequence = 0
    private var outbound = OutboundQueue()
    private var dropAfterWrite = false

    private var deadlines: ConnectionDeadlines
    private var armedDeadline: DispatchTime?

    /// How this connection may give up its slot to a newcomer, for other threads to read:
    /// 0 while busy, else `since << 2 | kind` (see `ConnectionDeadlines.Reclaimable`).
    private let reclaimable = Atomic<UInt64>(0)
    /// Set while the server has chosen this connection to close for a newcomer.
    private let evictionClaimed = Atomic<Bool>(false)
    /// Bytes read off the socket so far (package-visible, so tests wait on it instead of sleeping).
    private let received = Atomic<Int>(0)

    init(fd: Int32, peer: String, peerPort: Int, owner: any ConnectionOwner, queue: DispatchQueue) {
        self.fd = fd
        self.peer = peer
        self.peerPort = peerPort
        self.owner = owner
        self.limits = owner.limits
        self.timeouts = owner.timeouts
        self.decoder = RequestDecoder(limits: owner.limits)
        self.deadlines = ConnectionDeadlines(timeouts: owner.timeouts, openedAt: .now())
        self.queue = queue
        self.timer = DispatchSource.makeTimerSource(queue: queue)
    }

    /// Bytes this connection has read from its peer.
    var bytesReceived: Int { received.load(ordering: .relaxed) }

    /// Starts reading; call once, right after accepting, before anyone else can reach the
    /// connection (its state is set up here, then belongs to `queue`: resuming a source
    /// publishes it to the handlers that run there).
    func start() {
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler { [unowned self] in readable() }
        source.setCancelHandler { [self] in sourceCancelled() }
        readSource = source
        timer.setEventHandler { [unowned self] in timerFired() }
        timer.setCancelHandler { [self] in sourceCancelled() }
        liveSources = 2
        armTimer()
        publishReclaimable()
        timer.resume()
        source.resume()
    }

    /// Stops reading new requests: answers those in flight (with `Connection: close`), then closes.
    func beginShutdown() {
        queue.async { [self] in
            guard case .open = phase else { return }
            if slots.isEmpty, outbound.isEmpty {
                close()   // idle: nothing to finish, nothing of ours a reset could destroy
                return
            }
            phase = .draining
            deadlines.stopReading()
            finishIfDone()
            publishReclaimable()
        }
    }

    /// Closes at once, whatever is in flight (end of the shutdown grace period).
    func forceClose() {
        queue.async { [self] in close() }
    }

    // MARK: Reading

    private func readable() {
        dispatchPrecondition(condition: .onQueue(queue))
        var count = 0
        defer {
            // Published before the count, so whoever sees the bytes read sees their effect.
            publishReclaimable()
            received.add(count, ordering: .relaxed)
        }
        if case .lingering = phase {
            drainAndDrop()
            return
        }
        guard case .open = phase else { return }
        let room = limits.readBufferBytes - (inbound.count - readIndex)
        guard room > 0 else {
            pauseReading()
            return
        }
        let outcome: IOOutcome<Int>
        do {
            outcome = try withUnsafeTemporaryAllocation(byteCount: min(room, 16 * 1024), alignment: 1) {
                (buffer) throws(SyscallError) -> IOOutcome<Int> in
                let outcome = try Syscalls.read(fd, into: buffer)
                if case .done(let count) = outcome, count > 0 {
                    inbound.append(contentsOf: buffer.prefix(count))
                }
                return outcome
            }
        } catch {
            close()   // ECONNRESET and friends: the peer left
            return
        }
        switch outcome {
        case .wouldBlock:
            return
        case .done(0):
            // The peer finished sending. Answer what it asked, then close.
            pauseReading()
            phase = .draining
            deadlines.stopReading()
        case .done(let read):
            count = read
        }
        processInbound()
        flush()
    }

    /// Decodes every complete request in the buffer and hands each to the responder. Bodies
    /// are read (and dropped) before their request is answered; reading bodies never counts
    /// as activity, and each body has its own deadline.
    private func processInbound() {
        while case .open = phase {
            guard inbound.count > readIndex else {
                if decoder.phase == .head { deadlines.noHeadPending() }
                break
            }
            // Backpressure: no more requests while answers wait to be sent or read.
            if decoder.phase == .head, slots.count >= limits.maxPipelinedRequests || isWriteBacklogged {
                pauseReading()
                break
            }
            do {
                let (event, consumed) = try decoder.decode(inbound, from: readIndex)
                readIndex += consumed
                switch event {
                case .needMore:
                    if decoder.phase == .head { deadlines.headArriving(at: .now()) }
                    if consumed == 0 {
                        compactInbound()
                        return
                    }
                case .bodyFollows(let head):
                    deadlines.bodyArriving(at: .now())
                    if head.expectsContinue, slots.isEmpty, outbound.isEmpty {
                        outbound.append(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
                    }
                case .request(let head):
                    deadlines.requestRead()
                    dispatch(head)
                    if !head.keepAlive { phase = .draining }
                }
            } catch {
                reject(error)
            }
        }
        compactInbound()
    }

    private func dispatch(_ head: ParsedHead) {
        var request = head.request
        request.peerAddress = peer
        let sequence = nextSequence
        nextSequence += 1
        slots.append(Slot(sequence: sequence, isHead: request.method == "HEAD", keepAlive: head.keepAlive, version: request.version))
        let immediate = owner.responder.respond(to: request) { [self] response in
            queue.async { self.fill(sequence, with: response) }
        }
        if let immediate { setResponse(immediate, for: sequence) }
    }

    /// Answers a request the decoder refused (or that came too slowly), and stops reading:
    /// nothing after a framing error can be trusted.
    private func reject(_ error: HTTPParseError) {
        let sequence = nextSequence
        nextSequence += 1
        slots.append(Slot(sequence: sequence, isHead: false, keepAlive: false, version: .http1_1))
        var response = HTTPResponse.error(error.status, error.message)
        response.closesConnection = true
        owner.responder.didRefuse(status: error.status, peerAddress: peer, head: inbound[readIndex...])
        setResponse(response, for: sequence)
        phase = .draining
        deadlines.stopReading()
    }

    private func compactInbound() {
        if readIndex == inbound.count {
            inbound.removeAll(keepingCapacity: inbound.capacity <= 64 * 1024)
            readIndex = 0
        } else if readIndex > 4096 {
            inbound.removeFirst(readIndex)
            readIndex = 0
        }
    }

    private func pauseReading() {
        guard !readSuspended, let readSource else { return }
        readSource.suspend()
        readSuspended = true
    }

    private func resumeReading() {
        guard readSuspended, let readSource else { return }
        readSource.resume()
        readSuspended = false
    }

    // MARK: Writing

    private func fill(_ sequence: Int, with response: HTTPResponse) {
        dispatchPrecondition(condition: .onQueue(queue))
        setResponse(response, for: sequence)
        flush()
        publishReclaimable()
    }

    private func setResponse(_ response: HTTPResponse, for sequence: Int) {
        guard let index = slots.firstIndex(where: { $0.sequence == sequence }) else { return }   // closed meanwhile
        slots[index].response = response
    }

    /// Unsent output per connection at most (the README's promise): answers beyond it wait
    /// in their slots, where a cached body is only referenced, until the client reads.
    /// A single answer larger than this is queued alone.
    static let maxUnsentBytes = 256 * 1024

    /// Serializes answered requests at the front of the order while the output stays within
    /// `maxUnsentBytes`, then writes.
    private func flush() {
        guard !isClosed else { return }
        while true {
            var answered = 0
            var closing = false
            var full = false
            while answered < slots.count, let response = slots[answered].response {
                let slot = slots[answered]
                // While draining, the last response says `Connection: close`: nothing follows it.
                closing = response.closesConnection || !slot.keepAlive || response.truncatedBodyLength != nil
                    || (isDraining && answered + 1 == slots.count)
                let serialized = ResponseSerializer.serialize(response, isHead: slot.isHead, closing: closing, version: slot.version)
                guard outbound.isEmpty || outbound.unsentBytes + serialized.count <= Self.maxUnsentBytes else {
                    closing = false
                    full = true
                    break
                }
                outbound.append(serialized)
                answered += 1
                if response.truncatedBodyLength != nil { dropAfterWrite = true }
                if closing { break }
            }
            owner.probe.noteUnsent(outbound.unsentBytes)
            if closing {
                slots.removeAll()
                if case .open = phase { phase = .draining }
                break
            }
            slots.removeFirst(answered)
            // Requests held back by the pipelining limit can be parsed now.
            guard answered > 0, !full, case .open = phase, readIndex < inbound.count,
                  slots.count < limits.maxPipelinedRequests, !isWriteBacklogged
            else { break }
            let before = nextSequence
            processInbound()
            if nextSequence == before { break }
        }
        resumeReadingIfAllowed()
        write()
    }

    /// Whether output is waiting on the client: then no more requests are read, so a client
    /// that pipelines without reading cannot grow our memory.
    private var isWriteBacklogged: Bool {
        deadlines.writeBlockedSince != nil || outbound.unsentBytes >= Self.maxUnsentBytes
    }

    private func resumeReadingIfAllowed() {
        guard readSuspended, case .open = phase, !isWriteBacklogged,
              slots.count < limits.maxPipelinedRequests, inbound.count - readIndex < limits.readBufferBytes
        else { return }
        resumeReading()
    }

    private var isDraining: Bool {
        if case .draining = phase { return true }
        return false
    }

    private var isClosed: Bool {
        if case .closed = phase { return true }
        return false
    }

    private func write() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !isClosed else { return }
        let hadOutput = !outbound.isEmpty
        while !outbound.isEmpty {
            let outcome: IOOutcome<Int>
            do {
                outcome = try outbound.send(to: fd)
            } catch {
                close()   // EPIPE / ECONNRESET: the peer left
                return
            }
            if case .wouldBlock = outcome {
                deadlines.writeBlocked(at: .now())
                pauseReading()
                waitUntilWritable()
                armTimer()
                return
            }
        }
        deadlines.writeDrained(at: .now(), answered: hadOutput && slots.isEmpty)
        if !writeSuspended, let writeSource {
            writeSource.suspend()
            writeSuspended = true
        }
        if !slots.isEmpty, slots[0].response != nil {
            flush()   // answers held back by the output bound can go now
            return
        }
        if case .open = phase, readIndex < inbound.count {
            // Requests held back while the client was not reading can go on now.
            let before = nextSequence
            processInbound()
            if nextSequence != before {
                flush()
                return
            }
        }
        resumeReadingIfAllowed()
        finishIfDone()
        publishReclaimable()
    }

    private func waitUntilWritable() {
        if writeSource == nil {
            let source = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
            source.setEventHandler { [unowned self] in write() }
            source.setCancelHandler { [self] in sourceCancelled() }
            writeSource = source
            liveSources += 1
        }
        if writeSuspended, let writeSource {
            writeSource.resume()
            writeSuspended = false
        }
    }

    /// After the last byte went out: close, linger, or wait for the next request.
    private func finishIfDone() {
        guard outbound.isEmpty else { return }
        if dropAfterWrite {
            close()
            return
        }
        switch phase {
        case .draining where slots.isEmpty:
            // Half-close so the peer sees the end, and read its leftovers for a moment so that
            // the kernel does not answer them with a reset that could destroy our response.
            Syscalls.shutdownWrite(fd)
            phase = .lingering(until: .now() + .milliseconds(2000))
            resumeReading()
            armTimer()
        case .open where slots.isEmpty:
            armTimer()
        default:
            break
        }
    }

    private func drainAndDrop() {
        while true {
            let outcome = try? withUnsafeTemporaryAllocation(byteCount: 4096, alignment: 1) {
                (buffer) throws(SyscallError) -> IOOutcome<Int> in try Syscalls.read(fd, into: buffer)
            }
            switch outcome {
            case .done(let count) where count > 0:
                received.add(count, ordering: .relaxed)
                continue
            case .wouldBlock: return
            default: close(); return   // end of stream or error: the peer is done
            }
        }
    }

    // MARK: Deadlines

    /// Whether the connection is open with no answer owed or unsent: only then does the
    /// idle timeout run, and only then may it be closed for a newcomer.
    private var isQuiet: Bool {
        guard case .open = phase else { return false }
        return slots.isEmpty && outbound.isEmpty
    }

    /// The earliest moment something must happen.
    private func nextDeadline() -> DispatchTime? {
        switch phase {
        case .closed: return nil
        case .lingering(let until): return until
        case .open, .draining: return deadlines.next(quiet: isQuiet)
        }
    }

    /// Arms the timer if the next deadline is earlier than the one armed. A later one is
    /// found when the timer fires, so busy connections do not re-arm it on every request.
    private func armTimer() {
        guard let deadline = nextDeadline() else { return }
        if let armedDeadline, armedDeadline <= deadline { return }
        armedDeadline = deadline
        timer.schedule(deadline: deadline, leeway: .milliseconds(100))
    }

    private func timerFired() {
        dispatchPrecondition(condition: .onQueue(queue))
        defer { publishReclaimable() }
        armedDeadline = nil
        let now = DispatchTime.now()
        if case .lingering(let until) = phase {
            if until <= now { close() } else { armTimer() }
            return
        }
        switch deadlines.expired(at: now, quiet: isQuiet) {
        case .write:
            close()   // the client stopped reading
        case .head:
            // Slowloris: the head did not arrive in time (RFC 9110 §15.5.9).
            reject(.headTimedOut)
            flush()
        case .body:
            // A trickled body: reading it is not activity, so it has a deadline of its own.
            reject(.bodyTimedOut)
            flush()
        case .idle:
            close()   // idle keep-alive
        case nil:
            break
        }
        armTimer()
    }

    // MARK: Making room

    /// Publishes, for the accepting thread, whether and since when this connection could
    /// be closed to make room. Busy connections (an answer owed or unsent) never are.
    private func publishReclaimable() {
        var value: UInt64 = 0
        if let (kind, since) = reclaimKind() {
            // Lingering ones count as closing since forever: they go first.
            value = (kind == .closing ? 0 : since.uptimeNanoseconds << 2) | kind.rawValue
        }
        reclaimable.store(value, ordering: .relaxed)
    }

    private func reclaimKind() -> (ConnectionDeadlines.Reclaimable, DispatchTime)? {
        if case .lingering = phase { return (.closing, .now()) }
        return deadlines.reclaimable(quiet: isQuiet)
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
            guard !isClosed, let (kind, _) = reclaimKind() else { return }
            owner.probe.noteEviction()
            if kind == .slow { Syscalls.resetOnClose(fd) }
            close()
        }
    }

    // MARK: Closing

    /// The one place the connection ends. The fd itself is closed once every
    /// Dispatch source on it has been cancelled (Dispatch's rule for fds).
    private func close() {
        dispatchPrecondition(condition: .onQueue(queue))
        if isClosed { return }
        phase = .closed
        slots.removeAll()
        outbound.removeAll()
        inbound = []
        reclaimable.store(0, ordering: .relaxed)
        readSource?.cancel()
        if readSuspended { readSource?.resume(); readSuspended = false }
        writeSource?.cancel()
        if writeSuspended { writeSource?.resume(); writeSuspended = false }
        timer.cancel()
    }

    private func sourceCancelled() {
        liveSources -= 1
        guard liveSources == 0 else { return }
        Syscalls.close(fd)
        owner.connectionDidClose(self)
    }
}
