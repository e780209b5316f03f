/// What a cluster node says of the cluster, as much as a one-slot client needs: which node
/// is the master of its slot, and every node it knows of (to ask next time, when the node
/// asked now is gone).
struct RedisClusterMap: Sendable, Equatable {
    /// A node's address as clients reach it.
    struct Node: Sendable, Hashable {
        var host: String
        var port: Int
    }

    /// The master of the slot asked for; `nil` when no shard serves it (a cluster being set up).
    var owner: Node?
    /// Every node named, masters first.
    var nodes: [Node]

    /// Reads a `CLUSTER SHARDS` reply (Redis 7): per shard, its slot ranges and its nodes,
    /// each a flat list of field names and values. `askedHost` stands in for a node whose
    /// endpoint is unknown (`?`, or empty); `usesTLS` takes a node's `tls-port`.
    init?(shards reply: RedisValue, slot: Int, askedHost: String, usesTLS: Bool) {
        guard let shards = reply.array else { return nil }
        var owner: Node?
        var masters: [Node] = []
        var replicas: [Node] = []
        for shard in shards {
            guard let fields = Self.fields(shard), let slots = fields["slots"]?.array,
                let nodes = fields["nodes"]?.array
            else { return nil }
            let numbers = slots.compactMap(Self.number)
            guard numbers.count == slots.count, numbers.count % 2 == 0 else { return nil }
            let serves = stride(from: 0, to: numbers.count, by: 2).contains {
                numbers[$0] <= slot && slot <= numbers[$0 + 1]
            }
            for node in nodes {
                guard let node = Self.fields(node) else { return nil }
                let port = usesTLS ? (node["tls-port"] ?? node["port"]) : (node["port"] ?? node["tls-port"])
                guard let port = port.flatMap(Self.number), (1...65535).contains(port) else { continue }
                let host =
                    [node["endpoint"], node["hostname"], node["ip"]].lazy.compactMap { $0?.string }
                    .first { !$0.isEmpty && $0 != "?" } ?? askedHost
                let address = Node(host: host, port: port)
                if node["role"]?.string == "master" {
                    masters.append(address)
                    let online = node["health"]?.string.map { $0 == "online" } ?? true
                    if serves, owner == nil || online { owner = address }
                } else {
                    replicas.append(address)
                }
            }
        }
        self.owner = owner
        self.nodes = masters + replicas
    }

    /// Reads a `CLUSTER SLOTS` reply (before Redis 7): per range, its first and last slot,
    /// then its master and replicas as `[host, port, id, …]`; the port is the one for the
    /// connection's own transport (the TLS port on a TLS connection).
    init?(slots reply: RedisValue, slot: Int, askedHost: String) {
        guard let ranges = reply.array else { return nil }
        var owner: Node?
        var masters: [Node] = []
        var replicas: [Node] = []
        for range in ranges {
            guard let items = range.array, items.count >= 3, let first = Self.number(items[0]),
                let last = Self.number(items[1])
            else { return nil }
            for (index, item) in items.dropFirst(2).enumerated() {
                guard let node = item.array, node.count >= 2, let port = Self.number(node[1]),
                    (1...65535).contains(port)
                else { continue }
                let host = node[0].string.flatMap { $0.isEmpty || $0 == "?" ? nil : $0 } ?? askedHost
                let address = Node(host: host, port: port)
                if index == 0 {
                    if !masters.contains(address) { masters.append(address) }
                    if first <= slot && slot <= last { owner = address }
                } else if !replicas.contains(address) {
                    replicas.append(address)
                }
            }
        }
        self.owner = owner
        self.nodes = masters + replicas
    }

    /// A flat `[name, value, name, value, …]` list as a dictionary.
    private static func fields(_ value: RedisValue) -> [String: RedisValue]? {
        guard let items = value.array, items.count % 2 == 0 else { return nil }
        var fields: [String: RedisValue] = [:]
        for index in stride(from: 0, to: items.count, by: 2) {
            guard let name = items[index].string else { return nil }
            fields[name] = items[index + 1]
        }
        return fields
    }

    /// An integer, sent as one or as its decimal text.
    private static func number(_ value: RedisValue) -> Int? {
        if let integer = value.integer { return Int(exactly: integer) }
        return value.string.flatMap { Int($0) }
    }
}

/// A cluster's redirection of one command: `MOVED <slot> <host>:<port>` (the slot's master
/// is elsewhere now) or `ASK <slot> <host>:<port>` (the slot is being migrated there and the
/// key may already be there: ask once, after `ASKING`).
struct RedisRedirection: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        case moved, ask
    }

    let kind: Kind
    let slot: Int
    /// Where to go; the host is empty when the node did not know its own (the node that
    /// answered is then on the same host).
    let node: RedisClusterMap.Node

    /// Reads an error reply's message; `nil` for any other error.
    init?(_ message: String) {
        let words = message.split(separator: " ")
        guard words.count == 3, let slot = Int(words[1]), (0..<RedisSlot.count).contains(slot),
            let colon = words[2].lastIndex(of: ":"), let port = Int(words[2][words[2].index(after: colon)...]),
            (1...65535).contains(port)
        else { return nil }
        switch words[0] {
        case "MOVED": kind = .moved
        case "ASK": kind = .ask
        default: return nil
        }
        var host = words[2][..<colon]
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        self.slot = slot
        self.node = RedisClusterMap.Node(host: String(host), port: port)
    }
}
