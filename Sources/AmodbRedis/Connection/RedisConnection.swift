import AmodbSockets
import Dispatch

/// Where a command's reply (or its failure) goes. Called once, on the connection's queue.
typealias RedisCompletion = @Sendable (Result<RedisValue, RedisError>) -> Void

/// One Redis connection: connects (resolve, non-blocking TCP connect, the TLS handshake
/// for `rediss://`, `AUTH`, `SELECT`, `PING`), pipelines commands (written as they come, replies matched in order), times out
/// a connect or a command, and after a failure reconnects with exponential back-off.
///
/// While it backs off, commands fail at once with `.unavailable`: on a client's request
/// path a Redis that is down must cost nothing, not a timeout per request. A command that
/// times out after being written closes the connection: the replies behind it are stuck in
/// the same stream, and a reply that arrives late must never be taken for another's.
///
/// `@unchecked Sendable`: every mutable property is touched only on `queue` (entry points
/// hop there with `queue.async`; handlers run there and assert it).
final class RedisConnection: @unchecked Sendable {
    /// A command written (or about to be), waiting for its reply.
    private struct InFlight {
        enum Purpose {
            case caller(RedisCompletion)
            /// `AUTH`, `SELECT`, `PING` or a re-`SUBSCRIBE` sent by the connection itself.
            case handshake
            /// `ROLE`, under Sentinel: a server that is not the master fails the attempt.
            case roleCheck
        }
        let purpose: Purpose
        let deadline: DispatchTime
        /// Under Redis Cluster, a caller's command as written and how often it was redirected
        /// already, to send it again where a `MOVED` says; `nil` otherwise.
        var resend: Resend? = nil
    }

    /// A caller's command kept to be sent again after a `MOVED`.
    private struct Resend {
        let bytes: [UInt8]
        let redirects: Int
    }

    /// A command that arrived before the connection was ready.
    private struct Waiting {
        let bytes: [UInt8]
        let completion: RedisCompletion
        let deadline: DispatchTime
        /// How often it was redirected by `MOVED` already.
        var redirects = 0
    }

    /// The most `MOVED` one command follows: a cluster whose nodes keep naming each other
    /// (a map in flux) fails the command rather than keep it going round.
    private static let maxRedirects = 5

    private enum State {
        /// No connection, nothing wrong: the next command connects.
        case idle
        /// Resolving the host or waiting for TCP connect; the connect timeout ends at `deadline`.
        case connecting(deadline: DispatchTime)
        /// Connected over TCP, in the TLS handshake (`rediss://`); within the same connect timeout.
        case securing(deadline: DispatchTime)
        /// Connected; `AUTH`/`SELECT`/`PING` replies pending.
        case handshaking(deadline: DispatchTime)
        /// Commands are written as they come.
        case ready
        /// After a failure: commands fail at once until `until`, then it reconnects by itself.
        case backingOff(until: DispatchTime)
        case shutDown
    }

    /// The serial queue all of this connection's state belongs to.
    let queue: DispatchQueue
    private let configuration: RedisConfiguration
    private let onReadyChange: @Sendable (Bool) -> Void
    /// Receives `message` pushes when this is a subscriber connection (`nil`: a command connection).
    private let onMessage: (@Sendable (RedisMessage) -> Void)?
    /// Channels to subscribe to again after every reconnection.
    private var channels: Set<String> = []
    private var state = State.idle
    private var socket: RedisSocket?
    /// Where this attempt connects: the endpoint's host and port, or the master the sentinels
    /// or the cluster named.
    private var target: (host: String, port: Int)
    /// Under Redis Cluster, the nodes to ask where the slot's master is (shared by the
    /// client's connections); `nil` otherwise.
    private let clusterNodes: RedisClusterNodes?
    /// Under Redis Cluster, the master a `MOVED` named: the next attempt connects there
    /// without asking the cluster first.
    private var redirect: RedisClusterMap.Node?
    /// Under Redis Cluster, the master a `MOVED` named while commands written here are still
    /// unanswered: new commands wait, and the connection moves once those are answered (each
    /// is re-sent there if it too was moved), so replies stay matched to their commands.
    private var movingTo: RedisClusterMap.Node?
    /// The TLS context for `rediss://` (or why there is none); `nil` for `redis://`.
    private let tlsContext: Result<RedisTLSContext, RedisTLSError>?
    /// The socket's TLS session, from the handshake on; `nil` for `redis://`.
    private var tls: RedisTLSSession?
    /// A TLS write stopped until the socket is readable (`SSL_ERROR_WANT_READ` on write).
    private var writeWantsRead = false
    /// A TLS read stopped until the socket is writable (`SSL_ERROR_WANT_WRITE` on read).
    private var readWantsWrite = false
    /// Counts connection attempts, so a resolver answer for an abandoned attempt is ignored.
    private var attempt = 0
    /// Addresses of the host not tried yet in this attempt.
    private var untriedAddresses: ArraySlice<SocketAddress> = []
    private var parser: RESPParser
    private var outbound: [UInt8] = []
    private var writeIndex = 0
    private var flushScheduled = false
    private var inFlight: [InFlight] = []
    private var inFlightHead = 0
    private var waiting: [Waiting] = []
    private var consecutiveFailures = 0
    /// What the last attempt failed with; commands fail with it while the connection backs off.
    private var lastFailure = RedisError.unavailable("not connected yet")
    private let timer: any DispatchSourceTimer
    private var armedDeadline: DispatchTime?

    /// A connection that connects on its first command. `onReadyChange` hears when it
    /// becomes ready and when a ready connection fails (for an "up" gauge), on `queue`.
    /// `onMessage` makes it a subscriber connection (see `RedisSubscriber`).
    /// `tlsContext` is the client's for `rediss://` (one per client, shared by its connections);
    /// `clusterNodes`, under Redis Cluster, the nodes its connections learned of.
    init(
        configuration: RedisConfiguration, queue: DispatchQueue,
        tlsContext: Result<RedisTLSContext, RedisTLSError>? = nil,
        clusterNodes: RedisClusterNodes? = nil,
        onReadyChange: @escaping @Sendable (Bool) -> Void = { _ in },
        onMessage: (@Sendable (RedisMessage) -> Void)? = nil
    ) {
        self.configuration = configuration
        self.queue = queue
        self.tlsContext = tlsContext
        self.clusterNodes = configuration.cluster == nil ? nil : clusterNodes ?? RedisClusterNodes()
        self.target = (configuration.endpoint.host, configuration.endpoint.port)
        self.onReadyChange = onReadyChange
        self.onMessage = onMessage
        self.parser = RESPParser(limits: configuration.limits)
        self.timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [weak self] in self?.timerFired() }
        timer.resume()
    }

    // MARK: Entry points

    /// Sends `bytes` (one encoded command) and calls `completion` with its reply.
    func enqueue(_ bytes: [UInt8], timeout: Duration?, completion: @escaping RedisCompletion) {
        queue.async { [self] in
            submit(
                bytes, deadline: DispatchTime.now() + (timeout ?? configuration.commandTimeout).dispatchInterval,
                completion: completion)
        }
    }

    /// Sends several encoded commands back to back in one write and calls `completion` once
    /// with every reply (or failure), in order.
    func enqueue(
        batch: [[UInt8]], timeout: Duration?, completion: @escaping @Sendable ([Result<RedisValue, RedisError>]) -> Void
    ) {
        queue.async { [self] in
            guard !batch.isEmpty else { return completion([]) }
            let deadline = DispatchTime.now() + (timeout ?? configuration.commandTimeout).dispatchInterval
            let collector = BatchCollector(count: batch.count, completion: completion)
            for (index, bytes) in batch.enumerated() {
                submit(bytes, deadline: deadline) { collector.record($0, at: index) }
            }
        }
    }

    /// Starts connecting now rather than on the first command (a replica warming up).
    func connect() {
        queue.async { [self] in
            if case .idle = state { startConnecting() }
        }
    }

    /// Subscribes to `channel` now and after every reconnection; `completion` gets the
    /// acknowledgement. One channel per `SUBSCRIBE`, so each acknowledgement matches one command.
    func subscribe(_ channel: String, timeout: Duration?, completion: @escaping RedisCompletion) {
        queue.async { [self] in
            channels.insert(channel)
            submit(
                RESPEncoder.command(["SUBSCRIBE", .bulk(channel)]),
                deadline: DispatchTime.now() + (timeout ?? configuration.commandTimeout).dispatchInterval,
                completion: completion)
        }
    }

    /// Ends a back-off early: another connection to the same server just got through, so
    /// this one need not wait out its timer (up to `maxReconnectBackoff`) before serving again.
    func retryNow() {
        queue.async { [self] in
            if case .backingOff = state { startConnecting() }
        }
    }

    /// Fails everything pending with `.shutDown`, closes the socket, stops reconnecting.
    func shutdown(completion: @escaping @Sendable () -> Void) {
        queue.async { [self] in
            if case .shutDown = state { return completion() }
            let wasReady = isReady
            state = .shutDown
            failPending(.shutDown)
            closeSocket()
            timer.cancel()
            if wasReady { onReadyChange(false) }
            completion()
        }
    }

    // MARK: Commands

    private var isReady: Bool {
        if case .ready = state { true } else { false }
    }

    private var inFlightCount: Int { inFlight.count - inFlightHead }

    private func submit(
        _ bytes: [UInt8], deadline: DispatchTime, redirects: Int = 0, completion: @escaping RedisCompletion
    ) {
        dispatchPrecondition(condition: .onQueue(queue))
        switch state {
        case .shutDown:
            completion(.failure(.shutDown))
        case .backingOff:
            completion(.failure(lastFailure))
        case .ready where movingTo == nil:
            guard inFlightCount < configuration.maxPendingCommands else { return completion(.failure(.overloaded)) }
            write(bytes, callerEntry(bytes, completion, deadline: deadline, redirects: redirects))
        case .idle, .connecting, .securing, .handshaking, .ready:
            guard waiting.count < configuration.maxPendingCommands else { return completion(.failure(.overloaded)) }
            waiting.append(Waiting(bytes: bytes, completion: completion, deadline: deadline, redirects: redirects))
            arm(deadline)
            if case .idle = state { startConnecting() }
        }
    }

    /// A caller's command as it is written: under Redis Cluster with what a `MOVED` needs to send it again.
    private func callerEntry(
        _ bytes: [UInt8], _ completion: @escaping RedisCompletion, deadline: DispatchTime, redirects: Int
    ) -> InFlight {
        InFlight(
            purpose: .caller(completion), deadline: deadline,
            resend: clusterNodes == nil ? nil : Resend(bytes: bytes, redirects: redirects))
    }

    /// Queues `bytes` for the socket; the flush runs once per burst of commands, so a
    /// pipeline goes out in as few `send` calls as the socket allows.
    private func write(_ bytes: [UInt8], _ entry: InFlight) {
        inFlight.append(entry)
        outbound.append(contentsOf: bytes)
        arm(entry.deadline)
        guard !flushScheduled else { return }
        flushScheduled = true
        queue.async { [self] in
            flushScheduled = false
            flush()
        }
    }

    private func flush() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let socket, writeIndex < outbound.count else { return }
        // Nothing goes out before the TLS handshake is complete: the commands wait in `outbound`.
        if case .securing = state { return }
        while writeIndex < outbound.count {
            if let tls {
                let outcome = outbound.withUnsafeBytes {
                    tls.write(UnsafeRawBufferPointer(rebasing: $0[writeIndex...]))
                }
                switch outcome {
                case .done(let count): writeIndex += count
                case .wantWrite: return socket.watchWritable(true)
                case .wantRead:
                    writeWantsRead = true
                    return
                case .failed(let error): return fail(error)
                }
                continue
            }
            let outcome: IOOutcome<Int>
            do {
                outcome = try outbound.withUnsafeBytes { (all) throws(SyscallError) -> IOOutcome<Int> in
                    try Syscalls.send(socket.fd, UnsafeRawBufferPointer(rebasing: all[writeIndex...]))
                }
            } catch {
                return fail(.connectionClosed)
            }
            switch outcome {
            case .done(let count): writeIndex += count
            case .wouldBlock: return socket.watchWritable(true)
            }
        }
        outbound.removeAll(keepingCapacity: outbound.capacity <= 64 * 1024)
        writeIndex = 0
        socket.watchWritable(false)
    }

    // MARK: Connecting

    private func startConnecting() {
        dispatchPrecondition(condition: .onQueue(queue))
        attempt += 1
        let current = attempt
        let deadline = DispatchTime.now() + configuration.connectTimeout.dispatchInterval
        state = .connecting(deadline: deadline)
        arm(deadline)
        if let cluster = configuration.cluster, let clusterNodes {
            return findSlotMaster(cluster, clusterNodes, attempt: current)
        }
        guard let sentinels = configuration.sentinels else {
            return resolve(configuration.endpoint.host, configuration.endpoint.port, attempt: current)
        }
        // Asked before every attempt: after a failover the master is elsewhere.
        RedisSentinelQuery.masterAddress(sentinels, timeout: configuration.connectTimeout, queue: queue) {
            [weak self] result in
            guard let self, current == self.attempt, case .connecting = self.state else { return }
            switch result {
            case .success(let master): self.resolve(master.host, master.port, attempt: current)
            case .failure(let error): self.fail(error)
            }
        }
    }

    /// Under Redis Cluster: where a `MOVED` said, else where the nodes say the slot's master
    /// is, asked before every attempt (after a failover it is elsewhere).
    private func findSlotMaster(_ cluster: RedisClusterMode, _ nodes: RedisClusterNodes, attempt current: Int) {
        if let redirect {
            self.redirect = nil
            return resolve(redirect.host, redirect.port, attempt: current)
        }
        let endpoint = configuration.endpoint
        RedisClusterQuery.map(
            slot: cluster.slot, seeds: nodes.seeds(first: .init(host: endpoint.host, port: endpoint.port)),
            configuration: configuration, tlsContext: tlsContext, queue: queue
        ) { [weak self] result in
            guard let self, current == self.attempt, case .connecting = self.state else { return }
            switch result {
            case .success(let map):
                nodes.learned(map.nodes)
                guard let owner = map.owner else {
                    return self.fail(.unavailable("no master serves slot \(cluster.slot)"))
                }
                self.resolve(owner.host, owner.port, attempt: current)
            case .failure(let error):
                self.fail(error)
            }
        }
    }

    private func resolve(_ host: String, _ port: Int, attempt current: Int) {
        target = (host, port)
        RedisResolver.resolve(host: host, port: port, queue: queue) { [weak self] result in
            self?.resolved(result, attempt: current)
        }
    }

    private func resolved(_ result: Result<[SocketAddress], SyscallError>, attempt current: Int) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard current == attempt, case .connecting = state else { return }
        switch result {
        case .failure(let error):
            fail(.unavailable(error.description))
        case .success(let addresses):
            guard !addresses.isEmpty else { return fail(.unavailable("no address for \(target.host)")) }
            untriedAddresses = addresses[...]
            connectNextAddress()
        }
    }

    /// Connects to the next address the name resolved to (`localhost` may give `::1` first
    /// while Redis listens on 127.0.0.1 only); fails once none is left.
    private func connectNextAddress(after failure: SyscallError? = nil) {
        closeSocket()
        guard let address = untriedAddresses.popFirst() else {
            return fail(
                .unavailable(failure.map { "\(target.host):\(target.port): \($0)" } ?? "no address for \(target.host)"))
        }
        do {
            let fd = try Syscalls.socket(domain: address.family)
            let socket = RedisSocket(
                fd: fd, queue: queue,
                onReadable: { [weak self] in self?.readable() },
                onWritable: { [weak self] in self?.writable() }
            )
            self.socket = socket
            Syscalls.disableNagle(fd)
            switch try Syscalls.connect(fd, address) {
            case .done: connected()
            case .wouldBlock: socket.watchWritable(true)
            }
        } catch {
            connectNextAddress(after: error)
        }
    }

    private func writable() {
        dispatchPrecondition(condition: .onQueue(queue))
        if case .securing = state { return continueTLSHandshake() }
        if readWantsWrite {
            // Off until a write wants it again (`flush` below turns it back on): a source
            // left on with nothing to write would fire without pause.
            readWantsWrite = false
            socket?.watchWritable(false)
            readable()
        }
        guard case .connecting = state else { return flush() }
        guard let socket else { return }
        socket.watchWritable(false)
        do {
            let code = try Syscalls.pendingError(socket.fd)
            guard code == 0 else { return connectNextAddress(after: SyscallError("connect", code)) }
            connected()
        } catch {
            connectNextAddress(after: error)
        }
    }

    /// TCP is up: the TLS handshake for `rediss://`, else Redis's own handshake at once.
    private func connected() {
        guard case .connecting(let deadline) = state, let socket else { return }
        guard let tlsContext else { return startHandshake() }
        let context: RedisTLSContext
        switch tlsContext {
        case .success(let made): context = made
        case .failure(let error): return fail(.unavailable("TLS: \(error.reason)"))
        }
        do {
            tls = try RedisTLSSession(context: context, fd: socket.fd, host: target.host)
        } catch {
            return fail(error)
        }
        state = .securing(deadline: deadline)
        socket.startReading()
        continueTLSHandshake()
    }

    /// Runs the TLS handshake as far as the socket allows; a server whose certificate does
    /// not verify fails the attempt (`.certificateRejected`) before a byte of Redis is sent.
    private func continueTLSHandshake() {
        guard case .securing = state, let socket, let tls else { return }
        switch tls.handshake() {
        case .done:
            socket.watchWritable(false)
            startHandshake()
        case .wantRead:
            socket.watchWritable(false)
        case .wantWrite:
            socket.watchWritable(true)
        case .failed(let error):
            fail(error)
        }
    }

    /// `AUTH` and `SELECT` as the URL asks, then `PING`: a server that accepts TCP but does
    /// not answer (stopped, overloaded) is found out here, within the connect timeout.
    private func startHandshake() {
        let deadline: DispatchTime
        switch state {
        case .connecting(let until), .securing(let until): deadline = until
        default: return
        }
        guard let socket else { return }
        state = .handshaking(deadline: deadline)
        parser = RESPParser(limits: configuration.limits)
        socket.startReading()
        let endpoint = configuration.endpoint
        // `AUTH` first: a server with `requirepass` answers nothing else (not even `ROLE`)
        // before it, and replies come back in the order the commands were written.
        if let password = endpoint.password {
            let auth: [RedisValue] =
                if let username = endpoint.username {
                    ["AUTH", .bulk(username), .bulk(password.revealed)]
                } else {
                    ["AUTH", .bulk(password.revealed)]
                }
            write(RESPEncoder.command(auth), InFlight(purpose: .handshake, deadline: deadline))
        }
        if configuration.sentinels != nil {
            write(RESPEncoder.command(["ROLE"]), InFlight(purpose: .roleCheck, deadline: deadline))
        }
        var commands: [[RedisValue]] = []
        if endpoint.database != 0 { commands.append(["SELECT", .integer(Int64(endpoint.database))]) }
        commands.append(["PING"])
        // A subscriber's channels were lost with the old session (and what was published meanwhile:
        // whoever waits on an announcement must also poll).
        for channel in channels.sorted() { commands.append(["SUBSCRIBE", .bulk(channel)]) }
        for command in commands {
            write(RESPEncoder.command(command), InFlight(purpose: .handshake, deadline: deadline))
        }
    }

    private func becomeReady() {
        state = .ready
        consecutiveFailures = 0
        onReadyChange(true)
        let queued = waiting
        waiting = []
        let now = DispatchTime.now()
        for entry in queued {
            if entry.deadline <= now {
                entry.completion(.failure(.timedOut(.command)))
            } else {
                write(
                    entry.bytes,
                    callerEntry(entry.bytes, entry.completion, deadline: entry.deadline, redirects: entry.redirects))
            }
        }
    }

    // MARK: Reading

    private func readable() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let socket else { return }
        if case .securing = state { return continueTLSHandshake() }
        if let tls { return readableTLS(socket, tls) }
        let outcome: IOOutcome<Int>
        do {
            outcome = try withUnsafeTemporaryAllocation(byteCount: 64 * 1024, alignment: 1) {
                (buffer) throws(SyscallError) -> IOOutcome<Int> in
                let outcome = try Syscalls.receive(socket.fd, into: buffer)
                if case .done(let count) = outcome, count > 0 {
                    parser.append(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                }
                return outcome
            }
        } catch {
            return fail(.connectionClosed)
        }
        switch outcome {
        case .wouldBlock: return
        case .done(0): return fail(.connectionClosed)
        case .done: break
        }
        deliverParsed(from: socket)
    }

    /// Reads until OpenSSL wants more from the socket: a TLS session buffers whole records,
    /// so bytes it holds would otherwise wait for a readiness event that never comes.
    private func readableTLS(_ socket: RedisSocket, _ tls: RedisTLSSession) {
        reading: while true {
            let outcome = withUnsafeTemporaryAllocation(byteCount: 64 * 1024, alignment: 1) { buffer in
                let outcome = tls.read(into: buffer)
                if case .done(let count) = outcome, count > 0 {
                    parser.append(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                }
                return outcome
            }
            switch outcome {
            case .done(0): return fail(.connectionClosed)
            case .done: continue
            case .wantRead: break reading
            case .wantWrite:
                readWantsWrite = true
                socket.watchWritable(true)
                break reading
            case .failed(let error): return fail(error)
            }
        }
        if writeWantsRead {
            writeWantsRead = false
            flush()
        }
        guard self.socket === socket else { return }
        deliverParsed(from: socket)
    }

    /// Delivers every complete reply the parser holds, while `socket` is still the connection's.
    private func deliverParsed(from socket: RedisSocket) {
        while self.socket === socket {
            let value: RedisValue
            do {
                guard let next = try parser.next() else { return }
                value = next
            } catch {
                return fail(.protocolViolation(error))
            }
            deliver(value)
        }
    }

    private func deliver(_ value: RedisValue) {
        // A subscriber's pushes arrive between replies, not in answer to a command.
        if let onMessage, case .array(let items) = value, items.count == 3, items[0].bytes == Array("message".utf8),
            let channel = items[1].string, let payload = items[2].bytes
        {
            return onMessage(RedisMessage(channel: channel, payload: payload))
        }
        guard inFlightHead < inFlight.count else { return fail(.unexpectedReply("a reply no command asked for")) }
        let entry = inFlight[inFlightHead]
        inFlightHead += 1
        if inFlightHead == inFlight.count {
            inFlight.removeAll(keepingCapacity: true)
            inFlightHead = 0
        } else if inFlightHead > 1024, inFlightHead * 2 > inFlight.count {
            inFlight.removeFirst(inFlightHead)
            inFlightHead = 0
        }
        switch entry.purpose {
        case .handshake, .roleCheck:
            if case .error(let message) = value { return fail(.server(RedisServerError(message))) }
            if case .roleCheck = entry.purpose, case .array(let role) = value, let name = role.first?.string,
                name != "master"
            {
                return fail(.unavailable("\(target.host):\(target.port) is a \(name), not the master"))
            }
            let handshakeLeft = inFlight[inFlightHead...].contains {
                switch $0.purpose {
                case .handshake, .roleCheck: true
                case .caller: false
                }
            }
            if !handshakeLeft, case .handshaking = state { becomeReady() }
        case .caller(let completion):
            if case .error(let message) = value, let resend = entry.resend, message.hasPrefix("MOVED "),
                let moved = RedisRedirection(message), moved.kind == .moved, moved.slot == configuration.cluster?.slot,
                resend.redirects < Self.maxRedirects, let node = movedNode(moved)
            {
                // The slot's master is elsewhere now (a failover, a reshard): the command was
                // not run, so it is sent again there, as is every command behind it.
                movingTo = node
                waiting.append(
                    Waiting(
                        bytes: resend.bytes, completion: completion, deadline: entry.deadline,
                        redirects: resend.redirects + 1))
                return moveIfAnswered()
            }
            defer { moveIfAnswered() }
            if case .error(let message) = value, configuration.sentinels != nil, message.hasPrefix("READONLY") {
                // The master was demoted (a failover while this session stayed open): ask the sentinels again.
                let error = RedisError.unavailable("\(target.host):\(target.port) became a replica")
                completion(.failure(error))
                return fail(error)
            }
            if case .error(let message) = value {
                completion(.failure(.server(RedisServerError(message))))
            } else {
                completion(.success(value))
            }
        }
    }

    // MARK: Following the cluster

    /// Where a `MOVED` sends this connection (a node on this one's host when it names no
    /// host); `nil` when it names this very node, which there is no following.
    private func movedNode(_ moved: RedisRedirection) -> RedisClusterMap.Node? {
        let node = moved.node.host.isEmpty ? RedisClusterMap.Node(host: target.host, port: moved.node.port) : moved.node
        return node.host == target.host && node.port == target.port ? nil : node
    }

    /// Closes this session and connects where `movingTo` says, once no command written here
    /// waits for its reply; the commands that waited are written there when it is ready.
    private func moveIfAnswered() {
        guard let destination = movingTo, inFlightCount == 0, isReady else { return }
        movingTo = nil
        redirect = destination
        closeSocket()
        onReadyChange(false)
        startConnecting()
    }

    // MARK: Failing and deadlines

    /// Closes the connection, fails everything pending with `error`, and schedules the next attempt.
    private func fail(_ error: RedisError) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !isShutDown else { return }
        let wasReady = isReady
        closeSocket()
        if let movingTo {
            // A MOVED named the slot's new master before this failure: the next attempt goes there.
            redirect = movingTo
            self.movingTo = nil
        }
        consecutiveFailures += 1
        switch error {
        case .unavailable, .certificateRejected: lastFailure = error
        default: lastFailure = .unavailable(error.description)
        }
        failPending(error)
        if wasReady { onReadyChange(false) }
        // A session that was up and broke (Redis restarted, an idle cut) is retried at once;
        // after that, each failed attempt doubles the wait.
        if consecutiveFailures == 1 {
            startConnecting()
        } else {
            let exponent = min(consecutiveFailures - 2, 16)
            let backoff = min(configuration.reconnectBackoff * (1 << exponent), configuration.maxReconnectBackoff)
            let until = DispatchTime.now() + backoff.dispatchInterval
            state = .backingOff(until: until)
            arm(until)
        }
    }

    /// Drops the TLS session and closes the socket (its sources close the fd).
    private func closeSocket() {
        tls = nil
        writeWantsRead = false
        readWantsWrite = false
        socket?.close()
        socket = nil
    }

    private var isShutDown: Bool {
        if case .shutDown = state { true } else { false }
    }

    private func failPending(_ error: RedisError) {
        let entries = inFlight[inFlightHead...]
        inFlight = []
        inFlightHead = 0
        outbound = []
        writeIndex = 0
        let queued = waiting
        waiting = []
        for entry in entries {
            if case .caller(let completion) = entry.purpose { completion(.failure(error)) }
        }
        for entry in queued { entry.completion(.failure(error)) }
    }

    /// Makes sure the timer fires by `deadline`.
    private func arm(_ deadline: DispatchTime) {
        if let armedDeadline, armedDeadline <= deadline { return }
        armedDeadline = deadline
        timer.schedule(deadline: deadline, leeway: .milliseconds(1))
    }

    private func timerFired() {
        dispatchPrecondition(condition: .onQueue(queue))
        armedDeadline = nil
        let now = DispatchTime.now()
        switch state {
        case .connecting(let deadline), .securing(let deadline), .handshaking(let deadline):
            if deadline <= now { return fail(.timedOut(.connect)) }
            arm(deadline)
        case .backingOff(let until):
            if until <= now { return startConnecting() }
            arm(until)
        case .idle, .ready, .shutDown:
            break
        }
        if inFlight[inFlightHead...].contains(where: { $0.deadline <= now }) {
            return fail(.timedOut(.command))
        }
        var kept: [Waiting] = []
        for entry in waiting {
            if entry.deadline <= now { entry.completion(.failure(.timedOut(.command))) } else { kept.append(entry) }
        }
        waiting = kept
        let next = (inFlight[inFlightHead...].map(\.deadline) + waiting.map(\.deadline)).min()
        if let next { arm(next) }
    }
}

/// Gathers a batch's replies; every call happens on the connection's queue.
///
/// `@unchecked Sendable`: only touched from completions, which all run on one serial queue.
private final class BatchCollector: @unchecked Sendable {
    private var results: [Result<RedisValue, RedisError>?]
    private var remaining: Int
    private let completion: @Sendable ([Result<RedisValue, RedisError>]) -> Void

    init(count: Int, completion: @escaping @Sendable ([Result<RedisValue, RedisError>]) -> Void) {
        results = Array(repeating: nil, count: count)
        remaining = count
        self.completion = completion
    }

    func record(_ result: Result<RedisValue, RedisError>, at index: Int) {
        results[index] = result
        remaining -= 1
        if remaining == 0 { completion(results.compactMap { $0 }) }
    }
}

extension Duration {
    /// This duration for Dispatch, in nanoseconds (negative becomes zero).
    var dispatchInterval: DispatchTimeInterval {
        let (seconds, attoseconds) = components
        let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !nanoseconds.overflow else { return .never }
        return .nanoseconds(Int(max(0, nanoseconds.partialValue + attoseconds / 1_000_000_000)))
    }
}
