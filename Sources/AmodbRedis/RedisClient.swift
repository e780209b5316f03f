import AmodbSockets
import Dispatch
import Synchronization

/// A Redis client: a small pool of pipelining connections, used round robin, with an
/// async/await API. Typed helpers for the commands the proxy needs are in
/// `RedisClient+Commands.swift`, `EVALSHA` with its `EVAL` fallback in `RedisClient+Scripts.swift`.
///
/// Call `shutdown()` when done: it fails what is pending and closes every socket.
public final class RedisClient: Sendable {
    /// The configuration it was made with (password redacted in its description).
    public let configuration: RedisConfiguration
    private let connections: [RedisConnection]
    private let next = Atomic<Int>(0)
    private let readyConnections = ReadyCount()

    /// A client for `configuration`; connections open on first use (or `connect()`).
    public init(configuration: RedisConfiguration) {
        self.configuration = configuration
        // Like the server's event loops: serial queues over the non-overcommitting global
        // queue, so the client adds no thread of its own however busy it gets.
        let target = IOQueues.target
        let ready = readyConnections
        let peers = Peers()
        let tlsContext = RedisTLSContext.make(for: configuration)
        connections = (0..<max(1, configuration.connectionCount)).map { index in
            RedisConnection(
                configuration: configuration,
                queue: DispatchQueue(label: "amodb-redis.connection-\(index)", target: target),
                tlsContext: tlsContext,
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
        let connection = pick()
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<RedisValue, RedisError>, Never>) in
            connection.enqueue(bytes, timeout: timeout) { continuation.resume(returning: $0) }
        }
        return try result.get()
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
        return await withCheckedContinuation { continuation in
            connection.enqueue(batch: batch, timeout: timeout) { continuation.resume(returning: $0) }
        }
    }

    /// Fails pending commands with `.shutDown` and closes every connection.
    public func shutdown() async {
        for connection in connections {
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
