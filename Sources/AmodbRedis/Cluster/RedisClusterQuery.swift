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
        ask(
            Request(slot: slot, seeds: seeds, configuration: configuration, tlsContext: tlsContext, queue: queue),
            from: 0, failures: [], completion: completion)
    }

    private struct Request: Sendable {
        let slot: Int
        let seeds: [RedisClusterMap.Node]
        let configuration: RedisConfiguration
        let tlsContext: Result<RedisTLSContext, RedisTLSError>?
        let queue: DispatchQueue
    }

    private static func ask(
        _ request: Request, from index: Int, failures: [String],
        completion: @escaping @Sendable (Result<RedisClusterMap, RedisError>) -> Void
    ) {
        guard index < request.seeds.count else {
            return request.queue.async {
                completion(
                    .failure(
                        .unavailable("no cluster node named the slot's master: " + failures.joined(separator: "; "))))
            }
        }
        let seed = request.seeds[index]
        var configuration = request.configuration
        configuration.cluster = nil
        configuration.sentinels = nil
        configuration.endpoint.host = seed.host
        configuration.endpoint.port = seed.port
        configuration.endpoint.database = 0
        configuration.commandTimeout = configuration.connectTimeout
        let connection = RedisConnection(
            configuration: configuration, queue: DispatchQueue(label: "amodb-redis.cluster-map", target: request.queue),
            tlsContext: request.tlsContext)
        let usesTLS = configuration.endpoint.usesTLS
        let commands = [RESPEncoder.command(["CLUSTER", "SHARDS"]), RESPEncoder.command(["CLUSTER", "SLOTS"])]
        connection.enqueue(batch: commands, timeout: configuration.connectTimeout) { replies in
            // The connection is kept alive by this closure until it has answered.
            connection.shutdown {}
            let reason: String
            var map: RedisClusterMap?
            switch (replies.first, replies.last) {
            case (.success(let shards)?, _):
                map = RedisClusterMap(shards: shards, slot: request.slot, askedHost: seed.host, usesTLS: usesTLS)
                reason = "\(seed.host):\(seed.port) sent a CLUSTER SHARDS reply of another shape"
            case (.failure(.server), .success(let slots)?):
                map = RedisClusterMap(slots: slots, slot: request.slot, askedHost: seed.host)
                reason = "\(seed.host):\(seed.port) sent a CLUSTER SLOTS reply of another shape"
            case (.failure(.server(let error)), _):
                reason = "\(seed.host):\(seed.port) answered \(error.message.prefix(120))"
            case (.failure(let error), _):
                reason = "\(seed.host):\(seed.port): \(error)"
            default:
                reason = "\(seed.host):\(seed.port) sent no reply"
            }
            if let map, map.owner != nil { return request.queue.async { completion(.success(map)) } }
            let why = map == nil ? reason : "\(seed.host):\(seed.port) knows no master of slot \(request.slot)"
            ask(request, from: index + 1, failures: failures + [why], completion: completion)
        }
    }
}
