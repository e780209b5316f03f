import Dispatch

/// Asks the sentinels, one after another, where the master is
/// (`SENTINEL get-master-addr-by-name`), each over a short-lived connection of its own
/// that is shut down once it has answered or failed.
enum RedisSentinelQuery {
    /// The master's host and port as the first sentinel that knows says, or why none said;
    /// `completion` runs on `queue`. Each sentinel gets `timeout` to connect and answer.
    static func masterAddress(
        _ sentinels: RedisSentinels, timeout: Duration, queue: DispatchQueue,
        completion: @escaping @Sendable (Result<(host: String, port: Int), RedisError>) -> Void
    ) {
        ask(sentinels, from: 0, failures: [], timeout: timeout, queue: queue, completion: completion)
    }

    private static func ask(
        _ sentinels: RedisSentinels, from index: Int, failures: [String], timeout: Duration, queue: DispatchQueue,
        completion: @escaping @Sendable (Result<(host: String, port: Int), RedisError>) -> Void
    ) {
        guard index < sentinels.addresses.count else {
            return queue.async {
                completion(.failure(.unavailable("no sentinel named the master: " + failures.joined(separator: "; "))))
            }
        }
        let address = sentinels.addresses[index]
        var configuration = RedisConfiguration(endpoint: address)
        configuration.connectTimeout = timeout
        configuration.commandTimeout = timeout
        let connection = RedisConnection(
            configuration: configuration, queue: DispatchQueue(label: "amodb-redis.sentinel", target: queue))
        let command = RESPEncoder.command(["SENTINEL", "get-master-addr-by-name", .bulk(sentinels.masterName)])
        connection.enqueue(command, timeout: timeout) { reply in
            // The connection is kept alive by this closure until it has answered.
            connection.shutdown {}
            var master: (host: String, port: Int)?
            let reason: String
            switch reply {
            case .success(.array(let items)) where items.count == 2:
                if let host = items[0].string, let port = items[1].string.flatMap({ Int($0) }),
                    (1...65535).contains(port)
                {
                    master = (host, port)
                }
                reason = "\(address.host):\(address.port) sent an address that is not host and port"
            case .success:
                reason = "\(address.host):\(address.port) knows no master \(sentinels.masterName)"
            case .failure(let error):
                reason = "\(address.host):\(address.port): \(error)"
            }
            if let master { return queue.async { completion(.success(master)) } }
            ask(
                sentinels, from: index + 1, failures: failures + [reason], timeout: timeout, queue: queue,
                completion: completion)
        }
    }
}
