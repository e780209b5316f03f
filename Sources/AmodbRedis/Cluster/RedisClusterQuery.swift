import Dispatch
import Synchronization

/// The nodes a client's connections ask where their slot's master is: the configuration
/// endpoint first (a managed service's one name for the cluster), then every node the last
/// answer named, so that the map can still be learned when the node first given is gone.
/// Shared by one client's connections; it only grows by what a node said.
final class RedisClusterNodes: Sendable {
    private let known = Mutex<[RedisClusterMap.Node]>([])
    /// At most this many remembered: a cluster the size of a managed service's largest.
    private static let limit = 512

    /// Where to ask, in order: `first`, then the nodes learned, without repeats.
    func seeds(first: RedisClusterMap.Node) -> [RedisClusterMap.Node] {
        [first] + known.withLock { $0 }.filter { $0 != first }
    }

    /// Remembers what a node just said: its list replaces the last (a node removed from the
    /// cluster is forgotten).
    func learned(_ nodes: [RedisClusterMap.Node]) {
        guard !nodes.isEmpty else { return }
        known.withLock { $0 = Array(nodes.prefix(Self.limit)) }
    }
}

/// Asks cluster nodes, one after another, which node is the master of one slot
/// (`CLUSTER SHARDS`, and `CLUSTER SLOTS` from a node that does not know it), each over a
/// short-lived connection of its own, logged in and over TLS as the client's own.
enum RedisClusterQuery {
    /// The map as the first node that answers says, or why none did; `completion` runs on
    /// `queue`. Each node gets `configuration.connectTimeout` to connect and answer.
    static func map(
        slot: Int, seeds: [RedisClusterMap.Node], configuration: RedisConfiguration,
        tlsContext: Result<RedisTLSContext, RedisTLSError>?, queue: DispatchQueue,
        completion: @escaping @Sendable (Result<RedisClusterMap, RedisError>) -> Void
    ) {
        RedisAskInTurn.ask(
            seeds.map { configuration.node($0.host, $0.port) },
            commands: [["CLUSTER", "SHARDS"], ["CLUSTER", "SLOTS"]],
            timeout: configuration.connectTimeout, tlsContext: tlsContext, queue: queue,
            what: "cluster node named the slot's master",
            read: { seed, replies in
                let node = "\(seed.host):\(seed.port)"
                let map: RedisClusterMap?
                switch (replies.first, replies.last) {
                case (.success(let shards)?, _):
                    map = RedisClusterMap(shards: shards, slot: slot, askedHost: seed.host, usesTLS: seed.usesTLS)
                    if map == nil { return .none("\(node) sent a CLUSTER SHARDS reply of another shape") }
                case (.failure(.server), .success(let slots)?):
                    map = RedisClusterMap(slots: slots, slot: slot, askedHost: seed.host)
                    if map == nil { return .none("\(node) sent a CLUSTER SLOTS reply of another shape") }
                case (.failure(.server(let error))?, _):
                    return .none("\(node) answered \(error.message.prefix(120))")
                case (.failure(let error)?, _):
                    return .none("\(node): \(error)")
                case (nil, _):
                    return .none("\(node) sent no reply")
                }
                guard let map, map.owner != nil else { return .none("\(node) knows no master of slot \(slot)") }
                return .answer(map)
            },
            completion: completion)
    }
}
