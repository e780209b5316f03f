import Dispatch

/// Asks the sentinels, one after another, where the master is
/// (`SENTINEL get-master-addr-by-name`), each over a short-lived connection of its own.
enum RedisSentinelQuery {
    /// The master's host and port as the first sentinel that knows says, or why none said;
    /// `completion` runs on `queue`. Each sentinel gets `timeout` to connect and answer.
    static func masterAddress(
        _ sentinels: RedisSentinels, timeout: Duration, queue: DispatchQueue,
        completion: @escaping @Sendable (Result<(host: String, port: Int), RedisError>) -> Void
    ) {
        // Sentinels are reached in plain text, with their own password if any.
        RedisAskInTurn.ask(
            sentinels.addresses.map(RedisConfiguration.init(endpoint:)),
            commands: [["SENTINEL", "get-master-addr-by-name", .bulk(sentinels.masterName)]], timeout: timeout,
            tlsContext: nil, queue: queue, what: "sentinel named the master",
            read: { address, replies -> RedisAskInTurn.Reading<(host: String, port: Int)> in
                let sentinel = "\(address.host):\(address.port)"
                switch replies.first {
                case .success(.array(let items))? where items.count == 2:
                    guard let host = items[0].string, let port = items[1].string.flatMap({ Int($0) }),
                        (1...65535).contains(port)
                    else { return .none("\(sentinel) sent an address that is not host and port") }
                    return .answer((host, port))
                case .success?:
                    return .none("\(sentinel) knows no master \(sentinels.masterName)")
                case .failure(let error)?:
                    return .none("\(sentinel): \(error)")
                case nil:
                    return .none("\(sentinel) sent no reply")
                }
            },
            completion: completion)
    }
}
