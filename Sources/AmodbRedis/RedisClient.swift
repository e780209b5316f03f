import AmodbSockets
import Dispatch
import Synchronization

/// A Redis client: a small pool of pipelining connections, used round robin, with an
/// async/await API. Typed helpers for the commands the proxy needs are in
/// `RedisClient+Commands.swift`, `EVALSHA` with its `EVAL` fallback in `RedisClient+Scripts.swift`.
///
/// Under Redis Cluster (`RedisConfiguration.cluster`) every connection goes to the master of
/// the one slot all keys are in and follows `MOVED` there by itself; `ASK` (the slot is being
/// migrated and the key has moved) is followed here, with `ASKING` on a connection to the
/// importing node, and `TRYAGAIN` (a script's keys are split between the two nodes for a
/// moment) is asked again after a short wait, both within the command's timeout.
///
/// Call `shutdown()` when done: it fails what is pending and closes every socket.
public final class RedisClient: Sendable {
    /// The configuration it was made with (password redacted in its description).
    public let configuration: RedisConfiguration
    private let connections: [RedisConnection]
    private let next = Atomic<Int>(0)
    private let readyConnections = ReadyCount()
    /// Under Redis Cluster, connections to nodes an `ASK` named, by `host:port`.
    private let askConnections = Mutex<[String: RedisConnection]>([:])
    private let tlsContext: Result<RedisTLSContext, RedisTLSError>?

    /// A client for `configuration`; connections open on first use (or `connect()`).
    public init(configuration: RedisConfiguration) {
        self.configuration = configuration
        // Like the server's event loops: serial queues over the non-overcommitting global
        // queue, so the client adds no thread of its own however busy it gets.
        let target = IOQueues.target
        let ready = readyConnections
        let peers = Peers()
        let tlsContext = RedisTLSContext.make(for: configuration)
        self.tlsContext = tlsContext
        let clusterNodes = configuration.cluster.map { _ in RedisClusterNodes() }
        connections = (0..<max(1, configuration.connectionCount)).map { index in
            RedisConnection(
                configuration: configuration,
                queue: DispatchQueue(label: "amodb-redis.connection-\(index)", target: target),
                tlsContext: tlsContext, clusterNodes: clusterNodes,
                onReadyChange: { isReady in
                    ready.count.add(isReady ? 1 : -1, ordering: .relaxed)
                    // Redis is back: the others stop backing off now, not when their timers say.
                    if isReady { peers.connections.withLock { $0 }.forEach { $0.retryNow() } }
                }
            )
        }
        peers.connections.withLock { $0 = connections }
    }

    /// Whether at least one connection has a live session (for an "up" gauge and readiness logs).
    public var isConnected: Bool { readyConnections.count.load(ordering: .relaxed) > 0 }

    /// Starts connecting every connection now rather than on first use.
    public func connect() {
        for connection in connections { connection.connect() }
    }

    /// Sends one command (`["SET", "k", "v"]`) and returns its reply. An error reply throws
    /// `.server`; `timeout` overrides the configured command timeout.
    public func send(_ command: [RedisValue], timeout: Duration? = nil) async throws(RedisError) -> RedisValue {
        guard command.allSatisfy(RESPEncoder.isCommandArgument) else { throw .invalidArgument }
        let bytes = RESPEncoder.command(command)
        let result = await Self.send(bytes, on: pick(), timeout: timeout)
        if configuration.cluster != nil, case .failure(.server(let error)) = result, Self.isFollowed(error) {
            return try await follow(bytes, after: error, started: .now, timeout: timeout).get()
        }
        return try result.get()
    }

    private static func send(_ bytes: [UInt8], on connection: RedisConnection, timeout: Duration?) async -> Result<
        RedisValue, RedisError
    > {
        await withCheckedContinuation { continuation in
            connection.enqueue(bytes, timeout: timeout) { continuation.resume(returning: $0) }
        }
    }

    /// Sends `commands` back to back on one connection (one write, no round trip between
    /// them) and returns each reply or failure, in order.
    public func pipeline(_ commands: [[RedisValue]], timeout: Duration? = nil) async -> [Result<RedisValue, RedisError>]
    {
        guard commands.allSatisfy({ $0.allSatisfy(RESPEncoder.isCommandArgument) }) else {
            return commands.map { _ in .failure(.invalidArgument) }
        }
        let batch = commands.map(RESPEncoder.command)
        let connection = pick()
        let started = ContinuousClock.now
        var results = await withCheckedContinuation { continuation in
            connection.enqueue(batch: batch, timeout: timeout) { continuation.resume(returning: $0) }
        }
        guard configuration.cluster != nil else { return results }
        for (index, result) in results.enumerated() {
            if case .failure(.server(let error)) = result, Self.isFollowed(error) {
                results[index] = await follow(batch[index], after: error, started: started, timeout: timeout)
            }
        }
        return results
    }

    // MARK: Following a cluster's slot migration

    /// The replies of a cluster in the middle of migrating a slot that this client follows;
    /// `MOVED` is followed by the connections themselves.
    private static func isFollowed(_ error: RedisServerError) -> Bool {
        error.code == "ASK" || error.code == "TRYAGAIN"
    }

    /// The most `ASK` one command follows (a `TRYAGAIN` is asked again until its timeout).
    private static let maxAsks = 5

    /// Sends `bytes` again as the cluster's `error` asks, until it is answered otherwise or
    /// its timeout (counted from `started`) has passed: `ASK` on the named node after
    /// `ASKING`; `TRYAGAIN` (a multi-key command whose keys the migration has split) after a
    /// short wait, on the slot's master, as often as the timeout allows.
    private func follow(
        _ bytes: [UInt8], after error: RedisServerError, started: ContinuousClock.Instant, timeout: Duration?
    ) async -> Result<RedisValue, RedisError> {
        let deadline = started + (timeout ?? configuration.commandTimeout)
        var error = error
        var asks = 0
        var waits = 0
        while true {
            let left = deadline - .now
            guard left > .zero else { return .failure(.timedOut(.command)) }
            let result: Result<RedisValue, RedisError>
            if error.code == "ASK", asks < Self.maxAsks, let redirection = RedisRedirection(error.message),
                redirection.kind == .ask
            {
                asks += 1
                let connection = askConnection(to: redirection.node)
                let replies = await withCheckedContinuation { continuation in
                    connection.enqueue(batch: [RESPEncoder.command(["ASKING"]), bytes], timeout: left) {
                        continuation.resume(returning: $0)
                    }
                }
                result = replies.count == 2 ? replies[1] : .failure(.connectionClosed)
            } else if error.code == "TRYAGAIN" {
                // The migration moves the rest of the keys in a moment.
                waits += 1
                try? await Task.sleep(for: min(.milliseconds(min(5 * waits, 50)), left))
                let remaining = deadline - .now
                guard remaining > .zero else { return .failure(.timedOut(.command)) }
                result = await Self.send(bytes, on: pick(), timeout: remaining)
            } else {
                return .failure(.server(error))
            }
            guard case .failure(.server(let next)) = result, Self.isFollowed(next) else { return result }
            error = next
        }
    }

    /// A connection to `node` for what an `ASK` names there: made on first use and kept
    /// (a migration asks many times), a few at most.
    private func askConnection(to node: RedisClusterMap.Node) -> RedisConnection {
        let name = "\(node.host):\(node.port)"
        let (connection, dropped) = askConnections.withLock { connections -> (RedisConnection, [RedisConnection]) in
            if let known = connections[name] { return (known, []) }
            var dropped: [RedisConnection] = []
            if connections.count >= 4 {
                dropped = Array(connections.values)
                connections.removeAll()
            }
            let made = RedisConnection(
                configuration: configuration.node(node.host, node.port),
                queue: DispatchQueue(label: "amodb-redis.ask", target: IOQueues.target), tlsContext: tlsContext)
            connections[name] = made
            return (made, dropped)
        }
        for old in dropped { old.shutdown {} }
        return connection
    }

    /// Fails pending commands with `.shutDown` and closes every connection.
    public func shutdown() async {
        let asked = askConnections.withLock { connections in
            defer { connections.removeAll() }
            return Array(connections.values)
        }
        for connection in connections + asked {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                connection.shutdown { continuation.resume() }
            }
        }
    }

    private func pick() -> RedisConnection {
        connections[next.add(1, ordering: .relaxed).newValue % connections.count]
    }
}

/// How many of a client's connections have a live session; a class so the connections'
/// callbacks can share it (`Atomic` itself cannot be copied into a closure).
private final class ReadyCount: Sendable {
    let count = Atomic<Int>(0)
}

/// The pool's connections, for one connection's callback to reach the others (set once,
/// right after they are made).
private final class Peers: Sendable {
    let connections = Mutex<[RedisConnection]>([])
}
