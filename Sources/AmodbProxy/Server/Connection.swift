import Dispatch
import Glibc

/// What a connection needs from its server.
protocol ConnectionOwner: AnyObject, Sendable {
    var responder: any HTTPResponder { get }
    var limits: HTTPLimits { get }
    var timeouts: HTTPTimeouts { get }
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
    let queue: DispatchQueue
    private let owner: any ConnectionOwner
    private let limits: HTTPLimits
    private let timeouts: HTTPTimeouts
    private var parser: RequestHeadParser
    private var phase = Phase.open

    private var readSource: (any DispatchSourceRead)?
    private var writeSource: (any DispatchSourceWrite)?
    private let timer: any DispatchSourceTimer
    private var readSuspended = false
    private var writeSuspended = true
    private var liveSources = 0

    private var inbound: [UInt8] = []
    private var readIndex = 0
    private var bodyBytesToDiscard = 0
    private var slots: [Slot] = []
    private var nextSequence = 0
    private var outbound: [UInt8] = []
    private var writeIndex = 0
    private var dropAfterWrite = false

    private var headStartedAt: DispatchTime?
    private var idleSince = DispatchTime.now()
    private var writeBlockedSince: DispatchTime?
    private var armedDeadline: DispatchTime?

    init(fd: Int32, peer: String, owner: any ConnectionOwner, queue: DispatchQueue) {
        self.fd = fd
        self.peer = peer
        self.owner = owner
        self.limits = owner.limits
        self.timeouts = owner.timeouts
        self.parser = RequestHeadParser(limits: owner.limits)
        self.queue = queue
        self.timer = DispatchSource.makeTimerSource(queue: queue)
    }

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
            headStartedAt = nil
            finishIfDone()
        }
    }

    /// Closes at once, whatever is in flight (end of the shutdown grace period).
    func forceClose() {
        queue.async { [self] in close() }
    }

    // MARK: Reading

    private func readable() {
        dispatchPrecondition(condition: .onQueue(queue))
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
            headStartedAt = nil
        case .done:
            break
        }
        processInbound()
        flush()
    }

    /// Parses every complete request in the buffer and hands each to the responder.
    private func processInbound() {
        while case .open = phase {
            let available = inbound.count - readIndex
            if bodyBytesToDiscard > 0 {
                let skipped = min(bodyBytesToDiscard, available)
                readIndex += skipped
                bodyBytesToDiscard -= skipped
                if bodyBytesToDiscard > 0 { break }
                continue
            }
            guard available > 0 else {
                headStartedAt = nil
                break
            }
            // Backpressure: no more requests while answers wait to be sent or read.
            if slots.count >= limits.maxPipelinedRequests || isWriteBacklogged {
                pauseReading()
                break
            }
            do {
                switch try parser.parse(inbound, from: readIndex) {
                case .needMore:
                    if headStartedAt == nil { headStartedAt = .now() }
                    compactInbound()
                    return
                case .complete(let head, let consumed):
                    readIndex += consumed
                    headStartedAt = nil
                    bodyBytesToDiscard = head.bodyLength
                    if head.expectsContinue, slots.isEmpty, outbound.isEmpty {
                        outbound.append(contentsOf: "HTTP/1.1 100 Continue\r\n\r\n".utf8)
                    }
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

    /// Answers a request the parser refused, and stops reading: nothing after a framing error can be trusted.
    private func reject(_ error: HTTPParseError) {
        let sequence = nextSequence
        nextSequence += 1
        slots.append(Slot(sequence: sequence, isHead: false, keepAlive: false, version: .http1_1))
        var response = HTTPResponse.error(error.status, error.message)
        response.closesConnection = true
        owner.responder.didRefuse(status: error.status, peerAddress: peer)
        setResponse(response, for: sequence)
        phase = .draining
        headStartedAt = nil
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
    }

    private func setResponse(_ response: HTTPResponse, for sequence: Int) {
        guard let index = slots.firstIndex(where: { $0.sequence == sequence }) else { return }   // closed meanwhile
        slots[index].response = response
    }

    /// Serializes every answered request at the front of the order, then writes.
    private func flush() {
        guard !isClosed else { return }
        while true {
            var answered = 0
            var closing = false
            while answered < slots.count, let response = slots[answered].response {
                let slot = slots[answered]
                answered += 1
                // While draining, the last response says `Connection: close`: nothing follows it.
                closing = response.closesConnection || !slot.keepAlive || response.truncatedBodyLength != nil
                    || (isDraining && answered == slots.count)
                ResponseSerializer.write(response, isHead: slot.isHead, closing: closing, version: slot.version, into: &outbound)
                if response.truncatedBodyLength != nil { dropAfterWrite = true }
                if closing { break }
            }
            if closing {
                slots.removeAll()
                if case .open = phase { phase = .draining }
                break
            }
            slots.removeFirst(answered)
            // Requests held back by the pipelining limit can be parsed now.
            guard answered > 0, case .open = phase, readIndex < inbound.count,
                  slots.count < limits.maxPipelinedRequests, !isWriteBacklogged
            else { break }
            let before = nextSequence
            processInbound()
            if nextSequence == before { break }
        }
        resumeReadingIfAllowed()
        write()
    }

    /// Answers serialized but not yet taken by the kernel: past this, no more requests
    /// are read, so a client that pipelines without reading cannot grow our memory.
    private static let outboundHighWater = 256 * 1024

    private var isWriteBacklogged: Bool {
        writeBlockedSince != nil || outbound.count - writeIndex > Self.outboundHighWater
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
        while writeIndex < outbound.count {
            let outcome: IOOutcome<Int>
            do {
                outcome = try outbound.withUnsafeBytes { (bytes) throws(SyscallError) -> IOOutcome<Int> in
                    try Syscalls.send(fd, UnsafeRawBufferPointer(rebasing: bytes[writeIndex...]))
                }
            } catch {
                close()   // EPIPE / ECONNRESET: the peer left
                return
            }
            switch outcome {
            case .done(let count):
                writeIndex += count
            case .wouldBlock:
                if writeBlockedSince == nil { writeBlockedSince = .now() }
                pauseReading()
                waitUntilWritable()
                armTimer()
                return
            }
        }
        outbound.removeAll(keepingCapacity: outbound.capacity <= 256 * 1024)
        writeIndex = 0
        writeBlockedSince = nil
        if !writeSuspended, let writeSource {
            writeSource.suspend()
            writeSuspended = true
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
            bodyBytesToDiscard = 0
            resumeReading()
            armTimer()
        case .open where slots.isEmpty:
            idleSince = .now()
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
            case .done(let count) where count > 0: continue
            case .wouldBlock: return
            default: close(); return   // end of stream or error: the peer is done
            }
        }
    }

    // MARK: Deadlines

    /// The moment something must happen, and what.
    private func nextDeadline() -> DispatchTime? {
        switch phase {
        case .closed: return nil
        case .lingering(let until): return until
        case .open, .draining: break
        }
        if let writeBlockedSince { return writeBlockedSince + timeouts.writeSeconds }
        if let headStartedAt { return headStartedAt + timeouts.requestHeadSeconds }
        if slots.isEmpty, case .open = phase { return idleSince + timeouts.idleSeconds }
        return nil   // waiting on the responder, which has deadlines of its own
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
        armedDeadline = nil
        guard let deadline = nextDeadline() else { return }
        guard deadline <= .now() else {
            armTimer()
            return
        }
        if case .lingering = phase {
            close()
        } else if writeBlockedSince != nil {
            close()   // the client stopped reading
        } else if headStartedAt != nil {
            // Slowloris: the head did not arrive in time (RFC 9110 §15.5.9).
            reject(HTTPParseError(408, "The request head did not arrive in time."))
            flush()
        } else {
            close()   // idle keep-alive
        }
        armTimer()
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
