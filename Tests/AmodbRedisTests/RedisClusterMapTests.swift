import Testing

@testable import AmodbRedis

/// What a one-slot cluster client reads from a node: the slot of a key, the slot's master in
/// `CLUSTER SHARDS` and `CLUSTER SLOTS` replies (as Redis 7.0 sent them to a six-node
/// cluster), and `MOVED` and `ASK` redirections.
struct RedisClusterMapTests {
    /// `CLUSTER KEYSLOT` of a real 7.0 node for each key, hash tags' edge cases included.
    @Test(arguments: [
        ("{amodb-proxy:}budget:state", 4064), ("amodb-proxy:", 4064), ("foo", 12182), ("{user1000}.following", 3443),
        ("{}x", 10595), ("a{b}c{d}", 3300), ("}{a}", 15495), ("{a", 10276), ("hello world", 15332),
        ("123456789", 12739),
    ])
    func slotOfAKeyIsTheClusters(_ key: String, _ slot: Int) {
        #expect(RedisSlot.of(key) == slot)
    }

    @Test func clusterModeTagsEveryKeyIntoOneSlot() throws {
        let mode = try #require(RedisClusterMode(hashTag: "amodb-proxy:"))
        #expect(mode.keyPrefix == "{amodb-proxy:}")
        #expect(mode.slot == 4064)
        for name in ["budget:state", "budget:calls", "share:abc", "cache:/3/movie/550", "replicas"] {
            #expect(RedisSlot.of(mode.keyPrefix + name) == mode.slot)
        }
        // A brace would end the tag early (or leave it empty, hashing the whole key).
        #expect(RedisClusterMode(hashTag: "") == nil)
        #expect(RedisClusterMode(hashTag: "a}b") == nil)
        #expect(RedisClusterMode(hashTag: "{a") == nil)
    }

    private static func node(
        _ id: String, port: Int, role: String, endpoint: String = "127.0.0.1", health: String = "online",
        extra: [RedisValue] = []
    ) -> RedisValue {
        .array(
            [
                "id", .bulk(id), "port", .integer(Int64(port)), "ip", "127.0.0.1", "endpoint", .bulk(endpoint),
                "role", .bulk(role), "replication-offset", 72156, "health", .bulk(health),
            ] + extra)
    }

    private static func shard(_ ranges: [Int64], _ nodes: [RedisValue]) -> RedisValue {
        .array(["slots", .array(ranges.map(RedisValue.integer)), "nodes", .array(nodes)])
    }

    @Test func readsTheSlotsMasterFromClusterShards() throws {
        let reply = RedisValue.array([
            Self.shard(
                [5461, 10922],
                [Self.node("a", port: 7102, role: "master"), Self.node("b", port: 7104, role: "replica")]),
            Self.shard(
                [0, 4099, 16000, 16383],
                [
                    Self.node("c", port: 7101, role: "master"),
                    Self.node("d", port: 7106, role: "replica", health: "loading"),
                ]),
            Self.shard([4100, 5460, 10923, 15999], [Self.node("e", port: 7103, role: "master")]),
        ])
        let map = try #require(RedisClusterMap(shards: reply, slot: 4064, askedHost: "seed", usesTLS: false))
        #expect(map.owner == .init(host: "127.0.0.1", port: 7101))
        #expect(map.nodes.map(\.port) == [7102, 7101, 7103, 7104, 7106])
        let other = try #require(RedisClusterMap(shards: reply, slot: 16100, askedHost: "seed", usesTLS: false))
        #expect(other.owner?.port == 7101)
        let third = try #require(RedisClusterMap(shards: reply, slot: 12000, askedHost: "seed", usesTLS: false))
        #expect(third.owner?.port == 7103)
    }

    @Test func clusterShardsGivesTheTLSPortAndAHostnameOrTheAskedHost() throws {
        let reply = RedisValue.array([
            Self.shard(
                [0, 16383],
                [Self.node("a", port: 6379, role: "master", endpoint: "?", extra: ["tls-port", 6380])])
        ])
        let overTLS = try #require(RedisClusterMap(shards: reply, slot: 1, askedHost: "10.0.0.9", usesTLS: true))
        // `?` is a node that does not know its endpoint: its ip is used.
        #expect(overTLS.owner == .init(host: "127.0.0.1", port: 6380))
        let plain = try #require(RedisClusterMap(shards: reply, slot: 1, askedHost: "10.0.0.9", usesTLS: false))
        #expect(plain.owner?.port == 6379)
        let named = RedisValue.array([
            Self.shard([0, 16383], [Self.node("a", port: 6379, role: "master", endpoint: "node-1.cache.example")])
        ])
        #expect(
            RedisClusterMap(shards: named, slot: 9, askedHost: "x", usesTLS: false)?.owner?.host
                == "node-1.cache.example")
    }

    @Test func aFailedMasterIsTakenOnlyWhenTheShardHasNoOther() throws {
        let reply = RedisValue.array([
            Self.shard(
                [0, 16383],
                [
                    Self.node("old", port: 7101, role: "master", health: "fail"),
                    Self.node("new", port: 7104, role: "master"),
                ])
        ])
        #expect(RedisClusterMap(shards: reply, slot: 1, askedHost: "x", usesTLS: false)?.owner?.port == 7104)
    }

    @Test func readsTheSlotsMasterFromClusterSlots() throws {
        func entry(_ first: Int64, _ last: Int64, _ ports: [Int64], host: String = "127.0.0.1") -> RedisValue {
            .array(
                [.integer(first), .integer(last)] + ports.map { .array([.bulk(host), .integer($0), "id", .array([])]) })
        }
        let reply = RedisValue.array([
            entry(0, 4099, [7102, 7104]), entry(4100, 5460, [7101, 7106]), entry(5461, 10922, [7102, 7104]),
            entry(10923, 16383, [7103, 7105], host: ""),
        ])
        let map = try #require(RedisClusterMap(slots: reply, slot: 4064, askedHost: "seed"))
        #expect(map.owner == .init(host: "127.0.0.1", port: 7102))
        #expect(map.nodes.map(\.port) == [7102, 7101, 7103, 7104, 7106, 7105])
        // An empty host is the node asked.
        #expect(RedisClusterMap(slots: reply, slot: 16383, askedHost: "seed")?.owner == .init(host: "seed", port: 7103))
    }

    @Test func aReplyOfAnotherShapeIsNoMap() {
        #expect(RedisClusterMap(shards: .simpleString("OK"), slot: 0, askedHost: "x", usesTLS: false) == nil)
        #expect(
            RedisClusterMap(shards: .array([.array(["slots", "x"])]), slot: 0, askedHost: "x", usesTLS: false) == nil)
        #expect(RedisClusterMap(slots: .array([.array([1])]), slot: 0, askedHost: "x") == nil)
        #expect(RedisClusterMap(shards: .array([]), slot: 0, askedHost: "x", usesTLS: false)?.owner == nil)
    }

    @Test func readsRedirections() throws {
        let moved = try #require(RedisRedirection("MOVED 4064 10.0.0.2:6381"))
        #expect(moved.kind == .moved && moved.slot == 4064 && moved.node == .init(host: "10.0.0.2", port: 6381))
        let ask = try #require(RedisRedirection("ASK 4064 node-2.example:6379"))
        #expect(ask.kind == .ask && ask.node.host == "node-2.example")
        #expect(RedisRedirection("MOVED 4064 :6381")?.node == .init(host: "", port: 6381))
        #expect(RedisRedirection("MOVED 4064 [::1]:6381")?.node == .init(host: "::1", port: 6381))
        for other in [
            "TRYAGAIN Multiple keys request during rehashing of slot", "MOVED 99999 a:1", "MOVED x a:1", "ASK 1 a:0",
            "ERR x y z",
        ] {
            #expect(RedisRedirection(other) == nil)
        }
    }
}
