import AmodbBytes
import Dispatch

/// One HTTP/1.1 connection's logic as a value, after async-http-client's
/// `HTTP1ConnectionStateMachine`: events go in (bytes read, the peer finished, answers
/// ready, bytes written, the kernel full, a deadline passed, shutdown) and actions come
/// out (read, ask the responder, write, wait until writable, pause or resume reading,
/// arm the timer, half-close, close). It never touches a socket, a queue or a clock: the
/// time comes in with each event, so it is tested and fuzzed without any of them, and
/// `Connection` around it only performs what it is told.
///
/// Requests are answered in order (pipelining); unsent output stays within
/// `maxUnsentBytes`, a cached body referenced, not copied; no more requests are read while
/// answers wait to be sent or to be read by the client.
struct ConnectionStateMachine {
    /// What the connection must do, in order.
    enum Action {
        /// Read at most this many bytes, then report them (`bytesRead`, `endOfInput` or `peerLeft`).
        case read(upTo: Int)
        /// Read and drop whatever arrives (lingering after the last answer); at the end of
        /// the stream or on an error, report `peerLeft`.
        case discardInput
        /// Ask the responder for the answer to the request with this sequence number, taken
        /// with `takeRequest`; report it with `responsesReady`. (The request waits in its
        /// slot and moves out from there: an action carries no copy of it.)
        case respond(sequence: Int)
        /// The server answered a request itself (malformed, over a limit, too slow): tell the
        /// responder, with the refused request's bytes as far as they were read
        /// (`takeRefusedHead`; no action carries bytes, so that copying and dropping the
        /// actions of every event is plain memory, with no release per action).
        case refused(status: Int)
        /// Send `pendingOutput`; report with `didWrite` or `writeWouldBlock`.
        case write
        /// The kernel takes no more: send again once the socket is writable.
        case waitForWritable
        /// Everything was sent: stop waiting for writability.
        case stopWaitingForWritable
        /// Stop reading (backpressure, or no more requests are read); asked once until `resumeReading`.
        case pauseReading
        /// Read again (asked only after `pauseReading`).
        case resumeReading
        /// Fire `deadlinePassed` at this moment (earlier than any timer armed before).
        case armTimer(DispatchTime)
        /// Half-close our side: everything is sent (`lingering` starts).
        case shutdownWrite
        /// Close the connection; `reset` sends a reset instead of an orderly end.
        case close(reset: Bool)
    }

    /// One request's place in the answer order.
    private struct Slot {
        let sequence: Int
        let isHead: Bool
        let keepAlive: Bool
        let version: HTTPVersion
        /// The request, until `takeRequest` moves it out.
        var request: HTTPRequest?
        var response: HTTPResponse?

        /// Whether its answer is in (a pattern, not `response != nil`, which copies the answer).
        var isAnswered: Bool {
            if case .some = response { true } else { false }
        }
    }

    /// Why the connection stopped reading requests.
    private enum Phase {
        /// Reading and answering requests.
        case open
        /// No more requests are read; the pending ones are answered, then the connection closes.
        case draining
        /// Everything is sent and our side shut down; the peer's leftovers are read and dropped
        /// for a moment, so our last answer is not lost to a reset (RFC 9112 §9.6).
        case lingering(until: DispatchTime)
        case closed
    }

    /// Unsent output per connection at most (docs/security.md's promise): answers beyond it wait
    /// in their slots, where a cached body is only referenced, until the client reads.
    /// A single answer larger than this is queued alone.
    static let maxUnsentBytes = 256 * 1024

    /// How long a connection reads and drops the peer's leftovers after its last answer.
    static let lingerNanoseconds: UInt64 = 2_000_000_000

    /// Room for answers and output pieces an idle connection keeps (one request's).
    static let keptQueueCapacity = 2

    /// Most bytes asked of one read.
    static let readChunkBytes = 16 * 1024

    /// The peer's address, which every request read here carries (`HTTPRequest.peerAddress`).
    private let peerAddress: String
    private let limits: HTTPLimits
    private let errorResponse: HTTPResponse.ErrorMaker
    private var decoder: RequestDecoder
    private var phase = Phase.open
    private var inbound: [UInt8] = []
    private var readIndex = 0
    private var slots: [Slot] = []
    private var nextSequence = 0
    /// The bytes to send: heads, and bodies by reference.
    private(set) var pendingOutput = OutboundQueue()
    /// The array heads are written to: once the last head written there is sent (and let
    /// go of by `pendingOutput`), the next is written over it, with no allocation. Lent by
    /// the connection's event loop while the connection is served (`Connection.perform`),
    /// so that an idle connection holds none.
    var headStorage: [UInt8] = []
    /// The most head storage kept between answers (a usual head is a few hundred bytes).
    static let keptHeadStorage = 1024
    private var dropAfterWrite = false
    /// Whether the last reading action asked was `pauseReading`.
    private var readingPaused = false
    private var deadlines: ConnectionDeadlines
    private var armedDeadline: DispatchTime?
    /// Actions of the event being handled.
    private var actions: [Action] = []
    /// The refused request's bytes, from `reject` until `takeRefusedHead`.
    private var refusedHead: ArraySlice<UInt8> = []

    /// A connection accepted at `openedAt`; the answers it gives itself are worded by `errorResponse`.
    init(
        limits: HTTPLimits, timeouts: HTTPTimeouts,
        errorResponse: @escaping HTTPResponse.ErrorMaker = HTTPResponse.plainTextError, peerAddress: String = "",
        openedAt: DispatchTime
    ) {
        self.limits = limits
        self.peerAddress = peerAddress
        self.errorResponse = errorResponse
        decoder = RequestDecoder(limits: limits)
        deadlines = ConnectionDeadlines(timeouts: timeouts, openedAt: openedAt)
    }

    /// Whether the connection has closed.
    var isClosed: Bool {
        if case .closed = phase { return true }
        return false
    }

    /// Bytes read and not yet parsed, with the capacity held for them: an idle connection
    /// holds none.
    var inboundCapacity: Int { inbound.capacity }

    /// Room held for answers owed and for output pieces: an idle connection keeps at most
    /// `keptQueueCapacity` of each.
    var answerQueueCapacity: (answers: Int, pieces: Int) { (slots.capacity, pendingOutput.pieceCapacity) }

    // MARK: Events

    /// The connection was accepted: the first deadline.
    mutating func start() -> [Action] {
        armTimer()
        return take()
    }

    /// The socket is readable.
    mutating func readable() -> [Action] {
        switch phase {
        case .lingering:
            actions.append(.discardInput)
        case .open:
            let room = limits.readBufferBytes - (inbound.count - readIndex)
            if room > 0 {
                actions.append(.read(upTo: min(room, Self.readChunkBytes)))
            } else {
                pauseReading()
            }
        case .draining:
            // No more requests are read: stop being told of input (the readiness set is
            // level-triggered, so unread input would be reported again and again).
            pauseReading()
        case .closed:
            break
        }
        return take()
    }

    /// Bytes arrived: every complete request in them is handed on, then answers are written.
    mutating func bytesRead<Bytes: Collection<UInt8>>(_ bytes: Bytes, at now: DispatchTime) -> [Action] {
        guard case .open = phase else { return take() }
        let decodedInPlace: Void? =
            inbound.count == readIndex
            ? bytes.withContiguousStorageIfAvailable { fresh in
                // Nothing was buffered (the usual case): requests are decoded where the bytes
                // were read, and only what is left of them (a partial head, requests held back)
                // is kept, so a request read whole costs no copy and no buffer.
                inbound = []
                readIndex = 0
                let used = decodeRequests(in: fresh.span, from: 0, at: now)
                if used < fresh.count { inbound.append(contentsOf: fresh[used...]) }
            } : nil
        if decodedInPlace == nil {
            inbound.append(contentsOf: bytes)
            processInbound(at: now)
        }
        flush(at: now)
        return take()
    }

    /// The peer finished sending: answer what it asked, then close.
    mutating func endOfInput(at now: DispatchTime) -> [Action] {
        guard case .open = phase else { return take() }
        pauseReading()
        phase = .draining
        deadlines.stopReading()
        flush(at: now)
        return take()
    }

    /// The peer is gone (a reset, a broken pipe, the end of its leftovers): close at once.
    mutating func peerLeft() -> [Action] {
        close(reset: false)
        return take()
    }

    /// Moves out the request a `respond` action names (once; `nil` when its slot is gone
    /// because the connection closed meanwhile).
    mutating func takeRequest(_ sequence: Int) -> HTTPRequest? {
        guard let index = slotIndex(sequence) else { return nil }
        return slots[index].request.take()
    }

    /// Moves out the bytes of the request a `refused` action names, as far as they were read
    /// (once; empty after).
    mutating func takeRefusedHead() -> ArraySlice<UInt8> {
        defer { refusedHead = [] }
        return refusedHead
    }

    /// Answers arrived, each for the request with that sequence number (in any order).
    /// They are moved out of `responses`, which is left empty with its storage kept.
    mutating func responsesReady(_ responses: inout [(sequence: Int, response: HTTPResponse)], at now: DispatchTime)
        -> [Action]
    {
        guard !isClosed else {
            responses.removeAll(keepingCapacity: true)
            return take()
        }
        // Popped from the end: each answer moves into its slot without a copy.
        while let (sequence, response) = responses.popLast() {
            // A slot is gone when the connection closed meanwhile.
            guard let index = slotIndex(sequence) else { continue }
            slots[index].response = consume response
        }
        flush(at: now)
        return take()
    }

    /// The index of a request's slot: slots hold consecutive sequence numbers (requests are
    /// appended in order and answered from the front), so it is found by subtraction.
    private func slotIndex(_ sequence: Int) -> Int? {
        guard let first = slots.first?.sequence else { return nil }
        let index = sequence - first
        return index >= 0 && index < slots.count ? index : nil
    }

    /// The kernel took `count` bytes of `pendingOutput`.
    mutating func didWrite(_ count: Int, at now: DispatchTime) -> [Action] {
        guard !isClosed else { return take() }
        pendingOutput.dropSent(count)
        if pendingOutput.isEmpty {
            drained(at: now, hadOutput: true)
        } else {
            actions.append(.write)
        }
        return take()
    }

    /// The kernel would take no more of our output: wait, and read nothing meanwhile.
    mutating func writeWouldBlock(at now: DispatchTime) -> [Action] {
        guard !isClosed else { return take() }
        deadlines.writeBlocked(at: now)
        pauseReading()
        actions.append(.waitForWritable)
        armTimer()
        return take()
    }

    /// The armed timer fired.
    mutating func deadlinePassed(at now: DispatchTime) -> [Action] {
        armedDeadline = nil
        switch phase {
        case .closed:
            return take()
        case .lingering(let until):
            if until <= now { close(reset: false) } else { armTimer() }
            return take()
        case .open, .draining:
            break
        }
        switch deadlines.expired(at: now, quiet: isQuiet) {
        case .write:
            close(reset: false)  // the client stopped reading
        case .head:
            // Slowloris: the head did not arrive in time (RFC 9110 §15.5.9).
            reject(.headTimedOut, head: inbound[min(readIndex, inbound.count)...])
            flush(at: now)
        case .body:
            // A trickled body: reading it is not activity, so it has a deadline of its own.
            reject(.bodyTimedOut, head: inbound[min(readIndex, inbound.count)...])
            flush(at: now)
        case .idle:
            close(reset: false)  // idle keep-alive
        case nil:
            break
        }
        armTimer()
        return take()
    }

    /// Stop reading new requests: answer those in flight (the last with `Connection: close`), then close.
    mutating func shutdownRequested(at now: DispatchTime) -> [Action] {
        guard case .open = phase else { return take() }
        if slots.isEmpty, pendingOutput.isEmpty {
            close(reset: false)  // idle: nothing to finish, nothing of ours a reset could destroy
            return take()
        }
        phase = .draining
        deadlines.stopReading()
        finishIfDone(at: now)
        return take()
    }

    /// Close at once, whatever is in flight (end of the shutdown grace period, or room made
    /// for a newcomer: then `reset` frees a slow peer's buffers at once).
    mutating func closeNow(reset: Bool) -> [Action] {
        close(reset: reset)
        return take()
    }

    // MARK: Making room

    /// How the connection ranks for closing when the server is full, and since when; nil
    /// when busy (an answer owed or unsent). Lingering ones are closing anyway, since their
    /// last answer's moment did not matter: they go first.
    func reclaimable() -> (kind: ConnectionDeadlines.Reclaimable, since: DispatchTime)? {
        switch phase {
        case .closed: return nil
        case .lingering: return (.closing, DispatchTime(uptimeNanoseconds: 0))
        case .open, .draining: return deadlines.reclaimable(quiet: isQuiet)
        }
    }

    // MARK: Reading requests

    /// Decodes every complete request in the buffer and hands each on.
    private mutating func processInbound(at now: DispatchTime) {
        let buffered = inbound  // kept alive while its bytes are read in place
        readIndex = decodeRequests(in: buffered.span, from: readIndex, at: now)
        compactInbound()
    }

    /// Decodes every complete request in `bytes[start...]` and hands each on; returns where
    /// it stopped (the bytes from there on are not used yet). Bodies are read (and dropped)
    /// before their request is answered; reading bodies never counts as activity, and each
    /// body has its own deadline.
    private mutating func decodeRequests(in bytes: Span<UInt8>, from start: Int, at now: DispatchTime)
        -> Int
    {
        var index = start
        while case .open = phase {
            guard bytes.count > index else {
                if decoder.phase == .head { deadlines.noHeadPending() }
                break
            }
            // Backpressure: no more requests while answers wait to be sent or read.
            if decoder.phase == .head, slots.count >= limits.maxPipelinedRequests || isWriteBacklogged {
                pauseReading()
                break
            }
            do {
                let (event, consumed) = try decoder.decode(bytes.extracting(index...))
                index += consumed
                switch consume event {
                case .needMore:
                    if decoder.phase == .head { deadlines.headArriving(at: now) }
                    if consumed == 0 { return index }
                case .bodyFollows(let head):
                    deadlines.bodyArriving(at: now)
                    if head.expectsContinue, slots.isEmpty, pendingOutput.isEmpty {
                        pendingOutput.append(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
                    }
                case .request(var head):
                    deadlines.requestRead()
                    head.request.peerAddress = peerAddress
                    let sequence = nextSequence
                    nextSequence += 1
                    let keepAlive = head.keepAlive
                    slots.append(
                        Slot(
                            sequence: sequence, isHead: head.request.method == "HEAD", keepAlive: keepAlive,
                            version: head.request.version, request: head.takeRequest()))
                    if !keepAlive { phase = .draining }
                    actions.append(.respond(sequence: sequence))
                }
            } catch {
                reject(error, head: bytes.extracting(min(index, bytes.count)...).array()[...])
            }
        }
        return index
    }

    /// Answers a request the decoder refused (or that came too slowly), and stops reading:
    /// nothing after a framing error can be trusted.
    /// `head` is the refused request's bytes as far as they were read, for the responder.
    private mutating func reject(_ error: HTTPParseError, head: ArraySlice<UInt8>) {
        let sequence = nextSequence
        nextSequence += 1
        var response = errorResponse(error.status, error.message)
        response.connection = .close
        slots.append(
            Slot(
                sequence: sequence, isHead: false, keepAlive: false, version: .http1_1, request: nil, response: response
            ))
        refusedHead = head
        actions.append(.refused(status: error.status))
        phase = .draining
        deadlines.stopReading()
    }

    /// Drops parsed bytes; an empty buffer gives its storage back, so an idle connection
    /// holds no read buffer.
    private mutating func compactInbound() {
        if readIndex >= inbound.count {
            inbound = []
            readIndex = 0
        } else if readIndex > 4096 {
            inbound.removeFirst(readIndex)
            readIndex = 0
        }
    }

    // MARK: Writing answers

    /// Serializes answered requests at the front of the order while the output stays within
    /// `maxUnsentBytes`, then writes (or, with nothing to write, finishes).
    private mutating func flush(at now: DispatchTime) {
        guard !isClosed else { return }
        while true {
            var answered = 0
            var closing = false
            var full = false
            while answered < slots.count, slots[answered].isAnswered {
                // Moved out of its slot (and put back only if it does not fit yet).
                let response = slots[answered].response.take()!
                // While draining, the last answer says `Connection: close`: nothing follows it.
                closing =
                    response.connection.closes || !slots[answered].keepAlive
                    || (isDraining && answered + 1 == slots.count)
                // Written over the last head's storage (copied first while that head is unsent).
                let serialized = ResponseSerializer.serialize(
                    response, isHead: slots[answered].isHead, closing: closing, version: slots[answered].version,
                    now: Clocks.coarseEpochSeconds(), into: &headStorage)
                if headStorage.count > Self.keptHeadStorage { headStorage = [] }
                guard pendingOutput.isEmpty || pendingOutput.unsentBytes + serialized.count <= Self.maxUnsentBytes
                else {
                    slots[answered].response = consume response
                    closing = false
                    full = true
                    break
                }
                pendingOutput.append(serialized)
                answered += 1
                if case .abortAfterBodyBytes = response.connection { dropAfterWrite = true }
                if closing { break }
            }
            if closing {
                slots = []
                if case .open = phase { phase = .draining }
                break
            }
            slots.removeFirst(answered)
            // Requests held back by the pipelining limit can be parsed now.
            guard answered > 0, !full, case .open = phase, readIndex < inbound.count,
                slots.count < limits.maxPipelinedRequests, !isWriteBacklogged
            else { break }
            let before = nextSequence
            processInbound(at: now)
            if nextSequence == before { break }
        }
        resumeReadingIfAllowed()
        if pendingOutput.isEmpty {
            drained(at: now, hadOutput: false)
        } else {
            actions.append(.write)
        }
    }

    /// Everything queued was sent (or nothing was queued).
    private mutating func drained(at now: DispatchTime, hadOutput: Bool) {
        let wasBlocked = deadlines.writeBlockedSince != nil
        deadlines.writeDrained(at: now, answered: hadOutput && slots.isEmpty)
        if wasBlocked { actions.append(.stopWaitingForWritable) }
        if !slots.isEmpty, slots[0].isAnswered {
            flush(at: now)  // answers held back by the output bound can go now
            return
        }
        if case .open = phase, readIndex < inbound.count {
            // Requests held back while the client was not reading can go on now.
            let before = nextSequence
            processInbound(at: now)
            if nextSequence != before {
                flush(at: now)
                return
            }
        }
        resumeReadingIfAllowed()
        finishIfDone(at: now)
    }

    /// Whether output is waiting on the client: then no more requests are read, so a client
    /// that pipelines without reading cannot grow our memory.
    private var isWriteBacklogged: Bool {
        deadlines.writeBlockedSince != nil || pendingOutput.unsentBytes >= Self.maxUnsentBytes
    }

    private mutating func resumeReadingIfAllowed() {
        guard case .open = phase, !isWriteBacklogged,
            slots.count < limits.maxPipelinedRequests, inbound.count - readIndex < limits.readBufferBytes
        else { return }
        resumeReading()
    }

    /// Asks to stop reading, unless reading is stopped already.
    private mutating func pauseReading() {
        guard !readingPaused else { return }
        readingPaused = true
        actions.append(.pauseReading)
    }

    /// Asks to read again, if reading was stopped: only then (an action less per request).
    private mutating func resumeReading() {
        guard readingPaused else { return }
        readingPaused = false
        actions.append(.resumeReading)
    }

    private var isDraining: Bool {
        if case .draining = phase { return true }
        return false
    }

    /// After the last byte went out: close, linger, or wait for the next request.
    private mutating func finishIfDone(at now: DispatchTime) {
        guard pendingOutput.isEmpty else { return }
        if dropAfterWrite {
            close(reset: false)
            return
        }
        switch phase {
        case .draining where slots.isEmpty:
            // Half-close so the peer sees the end, and read its leftovers for a moment so that
            // the kernel does not answer them with a reset that could destroy our answer.
            actions.append(.shutdownWrite)
            phase = .lingering(until: now + .nanoseconds(Int(Self.lingerNanoseconds)))
            resumeReading()
            armTimer()
        case .open where slots.isEmpty:
            // Idle: give back answer queues that grew for a burst of pipelined requests (an
            // idle connection should cost little); the room one request needs is kept, or
            // every request would allocate both queues again.
            if slots.capacity > Self.keptQueueCapacity { slots = [] }
            pendingOutput.releaseStorage(above: Self.keptQueueCapacity)
            armTimer()
        default:
            break
        }
    }

    // MARK: Deadlines

    /// Whether the connection is open with no answer owed or unsent: only then does the
    /// idle timeout run, and only then may it be closed for a newcomer.
    private var isQuiet: Bool {
        guard case .open = phase else { return false }
        return slots.isEmpty && pendingOutput.isEmpty
    }

    /// Arms the timer if the next deadline is earlier than the one armed. A later one is
    /// found when the timer fires, so busy connections do not re-arm it on every request.
    private mutating func armTimer() {
        let deadline: DispatchTime?
        switch phase {
        case .closed: deadline = nil
        case .lingering(let until): deadline = until
        case .open, .draining: deadline = deadlines.next(quiet: isQuiet)
        }
        guard let deadline else { return }
        if let armedDeadline, armedDeadline <= deadline { return }
        armedDeadline = deadline
        actions.append(.armTimer(deadline))
    }

    // MARK: Closing

    private mutating func close(reset: Bool) {
        guard !isClosed else { return }
        phase = .closed
        slots = []
        pendingOutput.removeAll()
        inbound = []
        readIndex = 0
        actions.append(.close(reset: reset))
    }

    /// The actions gathered for the event being handled.
    private mutating func take() -> [Action] {
        defer { actions = [] }
        return actions
    }

    /// Takes back an array of actions that was handed out and performed: the next event's
    /// actions reuse its storage, so a connection's steady state allocates none. One grown
    /// by a burst (many pipelined requests) is not kept: thousands of connections keeping
    /// such arrays cost 12 KB each under the load checks' non-reading clients.
    mutating func recycle(_ performed: inout [Action]) {
        guard actions.capacity == 0, performed.capacity <= Self.keptActionCapacity else { return }
        performed.removeAll(keepingCapacity: true)
        swap(&actions, &performed)
    }

    /// Room for actions kept between events (a request's events ask for a few each).
    static let keptActionCapacity = 8

    /// Room held for the next event's actions.
    var actionCapacity: Int { actions.capacity }
}
