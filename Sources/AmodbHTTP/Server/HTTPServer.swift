public import AmodbSockets
import Dispatch
import Glibc
import Synchronization

/// A raw-socket HTTP/1.1 server on Dispatch: one listening socket, non-blocking
/// connections, each confined to one of a few event loops (`EventLoop`: a serial queue and
/// the readiness set of its connections). No thread per connection.
public final class HTTPServer: ConnectionOwner, Sendable {
    /// Where to listen and the limits every connection obeys.
    public struct Configuration: Sendable {
        /// Address to bind, an IPv4 or IPv6 literal.
        public var host: String
        /// Port to bind; 0 picks a free one (tests): read it back from `start()`.
        public var port: Int
        public var limits: HTTPLimits
        public var timeouts: HTTPTimeouts
        /// The body of every answer the server gives itself (400, 408, 413, 414, 431, 501,
        /// 505, 503 at the connection cap): the application's shape; plain text by default.
        public var errorResponse: HTTPResponse.ErrorMaker
        /// What the server's Dispatch queues are named after (`<label>.accept`,
        /// `<label>.loop-0`…), as debuggers and thread listings show them.
        public var queueLabel: String

        public init(
            host: String = "127.0.0.1", port: Int = 0, limits: HTTPLimits = HTTPLimits(),
            timeouts: HTTPTimeouts = HTTPTimeouts(),
            errorResponse: @escaping HTTPResponse.ErrorMaker = HTTPResponse.plainTextError,
            queueLabel: String = "http-server"
        ) {
            self.host = host
            self.port = port
            self.limits = limits
            self.timeouts = timeouts
            self.errorResponse = errorResponse
            self.queueLabel = queueLabel
        }
    }

    /// Why the server could not start.
    public enum StartError: Error, CustomStringConvertible {
        case invalidHost(String)
        case syscall(SyscallError)

        public var description: String {
            switch self {
            case .invalidHost(let host): "HOST must be an IP address such as 0.0.0.0 or ::1, not \(host)"
            case .syscall(let error): "cannot listen: \(error)"
            }
        }
    }

    /// Dispatch sources are safe to call from any thread (libdispatch locks inside);
    /// the overlay just does not mark them `Sendable`.
    private struct AcceptSource: @unchecked Sendable {
        let source: any DispatchSourceRead
    }

    private struct State {
        var listener: Int32 = -1
        var acceptSource: AcceptSource?
        var acceptPaused = false
        /// Made by `start`.
        var loops: EventLoops?
        var connections: [ObjectIdentifier: Connection] = [:]
        var shuttingDown = false
        var closed: [CheckedContinuation<Void, Never>] = []
    }

    let configuration: Configuration
    let responder: any HTTPResponder
    var limits: HTTPLimits { configuration.limits }
    var timeouts: HTTPTimeouts { configuration.timeouts }
    var errorResponse: HTTPResponse.ErrorMaker { configuration.errorResponse }
    private let state = Mutex(State())
    private let acceptQueue: DispatchQueue
    private let openConnections = Atomic<Int>(0)
    /// Connections closed since the allocator was last trimmed (see `noteClosed`).
    private let closesSinceTrim = Atomic<Int>(0)
    private let trimScheduled = Atomic<Bool>(false)
    /// What the connections did, for tests and operators.
    package let probe = ServerProbe()

    /// How many event loops a server runs: one per core this process may use. Requests
    /// are answered with the index of the loop that answers them (`ResponderContext.loopIndex`).
    public static func eventLoopCount() -> Int {
        EventLoops.usableCores()
    }

    public init(configuration: Configuration, responder: any HTTPResponder) {
        self.configuration = configuration
        self.responder = responder
        acceptQueue = DispatchQueue(label: configuration.queueLabel + ".accept", target: IOQueues.target)
    }

    /// Open client connections now.
    public var connectionCount: Int { openConnections.load(ordering: .relaxed) }

    /// Binds, listens and starts accepting; returns the bound port.
    public func start() throws(StartError) -> Int {
        Syscalls.ignoreSIGPIPE()
        Syscalls.raiseDescriptorLimit()
        guard let address = SocketAddress(host: configuration.host, port: configuration.port) else {
            throw .invalidHost(configuration.host)
        }
        let fd: Int32
        let port: Int
        do {
            fd = try Syscalls.socket(domain: address.family)
        } catch {
            throw .syscall(error)
        }
        do {
            try Syscalls.setsockopt(fd, level: SOL_SOCKET, option: SO_REUSEADDR, value: 1)
            try address.withSockaddr { (pointer, length) throws(SyscallError) in try Syscalls.bind(fd, pointer, length)
            }
            try Syscalls.listen(fd, backlog: 4096)
            port = try Syscalls.boundPort(fd)
        } catch {
            Syscalls.close(fd)
            throw .syscall(error)
        }
        let loops: EventLoops
        do {
            loops = try EventLoops(label: configuration.queueLabel, probe: probe)
        } catch {
            Syscalls.close(fd)
            throw .syscall(error)
        }
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: acceptQueue)
        source.setEventHandler { [self] in acceptConnections() }
        source.setCancelHandler { Syscalls.close(fd) }
        state.withLock {
            $0.listener = fd
            $0.acceptSource = AcceptSource(source: source)
            $0.loops = loops
        }
        source.resume()
        return port
    }

    private func acceptConnections() {
        dispatchPrecondition(condition: .onQueue(acceptQueue))
        // Connections that could make room, found once per batch and only when full.
        var reclaimable: ArraySlice<Connection>?
        // A bounded batch per wake-up, so one flood cannot starve the queue.
        for _ in 0..<256 {
            let listener = state.withLock { $0.shuttingDown ? -1 : $0.listener }
            guard listener >= 0 else { return }
            let accepted: (fd: Int32, peer: String, port: Int)
            do {
                switch try Syscalls.accept(listener) {
                case .wouldBlock: return
                case .done(let client): accepted = client
                }
            } catch {
                if error.isDescriptorExhaustion { pauseAccepting() }
                return
            }
            Syscalls.disableNagle(accepted.fd)
            if openConnections.load(ordering: .relaxed) >= limits.maxConnections {
                // Full: close the slowest connection for this one, or refuse it if none is slow.
                if reclaimable == nil { reclaimable = reclaimableConnections()[...] }
                var victim: Connection?
                while victim == nil, let next = reclaimable?.popFirst() {
                    if next.claimForEviction() { victim = next }
                }
                guard let victim else {
                    shed(accepted.fd)
                    continue
                }
                victim.evict()
            }
            // Made and registered under the lock `shutdown` takes, so no connection slips in
            // after shutdown has collected the ones to close.
            let connection = state.withLock { state -> Connection? in
                guard !state.shuttingDown, let loops = state.loops else { return nil }
                let connection = Connection(
                    fd: accepted.fd, peer: accepted.peer, peerPort: accepted.port, owner: self, loop: loops.assign())
                state.connections[ObjectIdentifier(connection)] = connection
                openConnections.add(1, ordering: .relaxed)
                connection.start()
                return connection
            }
            guard connection != nil else {
                Syscalls.close(accepted.fd)
                return
            }
        }
    }

    /// The connections that may be closed to make room, slowest first: lingering ones, then
    /// heads or bodies arriving (or new connections silent) for longer than `slowPeerSeconds`
    /// (oldest first), then idle
    /// keep-alive ones (longest idle first). Each is claimed when used, so no two newcomers take the same.
    /// Busy connections (an answer owed or unsent) are never chosen.
    private func reclaimableConnections() -> [Connection] {
        let now = DispatchTime.now().uptimeNanoseconds
        let slowAfter = UInt64(max(0, timeouts.slowPeerSeconds) * 1_000_000_000)
        let candidates = state.withLock { state in
            state.connections.values.compactMap { connection in
                connection.reclaimability(now: now, slowAfter: slowAfter).map { (connection, $0.kind, $0.since) }
            }
        }
        return
            candidates
            .sorted { ($0.1, $0.2) < ($1.1, $1.2) }
            .prefix(256)
            .map(\.0)
    }

    /// Out of descriptors (`EMFILE`): stop accepting for a moment instead of spinning on a
    /// listener that stays readable, then try again.
    private func pauseAccepting() {
        let paused: AcceptSource? = state.withLock {
            guard !$0.acceptPaused, !$0.shuttingDown else { return nil }
            $0.acceptPaused = true
            return $0.acceptSource
        }
        guard let paused else { return }
        paused.source.suspend()
        acceptQueue.asyncAfter(deadline: .now() + .milliseconds(100)) { [self] in
            let paused: AcceptSource? = state.withLock {
                guard $0.acceptPaused else { return nil }
                $0.acceptPaused = false
                return $0.acceptSource
            }
            paused?.source.resume()
        }
    }

    /// Over the connection cap: a short 503 and close, without reading the request.
    private func shed(_ fd: Int32) {
        var response = configuration.errorResponse(503, "The server is at its connection limit; try again shortly.")
        response.headers.set("Retry-After", "1")
        let serialized = ResponseSerializer.serialize(response, isHead: false, closing: true, version: .http1_1)
        let bytes = serialized.head + serialized.body
        _ = try? bytes.withUnsafeBytes { (raw) throws(SyscallError) in try Syscalls.send(fd, raw) }
        // Half-close, then drop what the client already sent: closing with unread bytes
        // would make the kernel answer with a reset that can destroy the 503 (RFC 9112 §9.6).
        Syscalls.shutdownWrite(fd)
        _ = withUnsafeTemporaryAllocation(byteCount: 16 * 1024, alignment: 1) { buffer in
            try? Syscalls.receive(fd, into: buffer)
        }
        Syscalls.close(fd)
    }

    func connectionDidClose(_ connection: Connection) {
        openConnections.subtract(1, ordering: .relaxed)
        noteClosed()
        let waiters: [CheckedContinuation<Void, Never>] = state.withLock {
            state in
            state.connections[ObjectIdentifier(connection)] = nil
            guard state.shuttingDown, state.connections.isEmpty else { return [] }
            defer { state.closed = [] }
            return state.closed
        }
        waiters.forEach { $0.resume() }
    }

    /// Many connections closing leave glibc holding their freed buffers (it trims only the
    /// top of the main heap, and each event-loop thread has an arena of its own): after a
    /// wave of closes, hand the free memory back once things settle, at most once a second.
    private func noteClosed() {
        guard closesSinceTrim.add(1, ordering: .relaxed).newValue >= 256,
            trimScheduled.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged
        else { return }
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + 1) { [self] in
            closesSinceTrim.store(0, ordering: .relaxed)
            Syscalls.trimAllocator()
            trimScheduled.store(false, ordering: .relaxed)
        }
    }

    /// Bytes read so far on the open connection from this peer port, or nil when there is
    /// none (never opened, or closed): lets a test wait until the server has read what it
    /// sent, instead of sleeping and hoping.
    package func bytesReceived(fromPeerPort port: Int) -> Int? {
        state.withLock { state in state.connections.values.first { $0.peerPort == port } }?.bytesReceived
    }

    /// Reads that brought bytes and `sendmsg` calls made by the open connection at this peer
    /// port (nil: none open): how a test sees that answers read together go out together.
    package func syscallCounts(ofPeerPort port: Int) -> (reads: Int, sends: Int)? {
        state.withLock { state in state.connections.values.first { $0.peerPort == port } }?.syscallCounts
    }

    /// How the open connection at this peer port ranks for closing when the server is full,
    /// as it last published (nil: busy, or none open): lets a test wait until the server has
    /// taken in what it did, instead of sleeping.
    func reclaimableKind(ofPeerPort port: Int) -> ConnectionDeadlines.Reclaimable? {
        state.withLock { state in state.connections.values.first { $0.peerPort == port } }?.reclaimableKind
    }

    /// Stops accepting, lets requests in flight finish for up to `gracePeriod` seconds,
    /// closes idle connections at once and the rest when the period ends.
    public func shutdown(gracePeriod: Double = 5) async {
        let (source, connections, wasPaused) = state.withLock { state in
            let wasShuttingDown = state.shuttingDown
            state.shuttingDown = true
            let source = wasShuttingDown ? nil : state.acceptSource
            state.acceptSource = nil
            let wasPaused = state.acceptPaused && source != nil
            state.acceptPaused = false
            return (source, Array(state.connections.values), wasPaused)
        }
        if let source {
            source.source.cancel()
            if wasPaused { source.source.resume() }
        }
        connections.forEach { $0.beginShutdown() }
        let deadline = DispatchTime.now() + gracePeriod
        acceptQueue.asyncAfter(deadline: deadline) { [self] in
            state.withLock { Array($0.connections.values) }.forEach { $0.forceClose() }
        }
        await withCheckedContinuation { continuation in
            let done = state.withLock { state in
                if state.connections.isEmpty { return true }
                state.closed.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }
}
