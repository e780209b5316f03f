import Dispatch

/// Asks servers one after another, each over a short-lived connection of its own that is
/// shut down once it has answered or failed, until one gives an answer `read` takes; the
/// reasons the others gave make the failure. Sentinel's master and a cluster's map are
/// found this way, before a connection attempt.
enum RedisAskInTurn {
    /// What `read` made of one server's replies.
    enum Reading<Answer: Sendable>: Sendable {
        /// The answer: no other server is asked.
        case answer(Answer)
        /// Why this server's replies are no answer; the next server is asked.
        case none(String)
    }

    /// Sends `commands` (in one write) to each of `servers` in turn, each given `timeout`
    /// to connect and answer; `completion` runs on `queue` with the first answer, or with
    /// `.unavailable` naming `what` was not found and each server's reason.
    static func ask<Answer: Sendable>(
        _ servers: [RedisConfiguration], commands: [[RedisValue]], timeout: Duration,
        tlsContext: Result<RedisTLSContext, RedisTLSError>?, queue: DispatchQueue, what: String,
        read: @escaping @Sendable (RedisEndpoint, [Result<RedisValue, RedisError>]) -> Reading<Answer>,
        completion: @escaping @Sendable (Result<Answer, RedisError>) -> Void
    ) {
        let encoded = commands.map(RESPEncoder.command)
        next(
            servers[...], encoded, timeout: timeout, tlsContext: tlsContext, queue: queue, what: what, failures: [],
            read: read, completion: completion)
    }

    private static func next<Answer: Sendable>(
        _ servers: ArraySlice<RedisConfiguration>, _ commands: [[UInt8]], timeout: Duration,
        tlsContext: Result<RedisTLSContext, RedisTLSError>?, queue: DispatchQueue, what: String, failures: [String],
        read: @escaping @Sendable (RedisEndpoint, [Result<RedisValue, RedisError>]) -> Reading<Answer>,
        completion: @escaping @Sendable (Result<Answer, RedisError>) -> Void
    ) {
        guard var first = servers.first else {
            return queue.async {
                completion(.failure(.unavailable("no \(what): " + failures.joined(separator: "; "))))
            }
        }
        first.connectTimeout = timeout
        first.commandTimeout = timeout
        let server = first
        let connection = RedisConnection(
            configuration: server, queue: DispatchQueue(label: "amodb-redis.ask-in-turn", target: queue),
            tlsContext: tlsContext)
        connection.enqueue(batch: commands, timeout: timeout) { replies in
            // The connection is kept alive by this closure until it has answered.
            connection.shutdown {}
            switch read(server.endpoint, replies) {
            case .answer(let answer):
                queue.async { completion(.success(answer)) }
            case .none(let reason):
                next(
                    servers.dropFirst(), commands, timeout: timeout, tlsContext: tlsContext, queue: queue, what: what,
                    failures: failures + [reason], read: read, completion: completion)
            }
        }
    }
}
