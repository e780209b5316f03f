import AmodbRedis
import AmodbRedisTestSupport
import AmodbTestSupport
import Testing

/// The client under Redis Sentinel: the sentinel list as an operator writes it, the master
/// found through a real sentinel, and a server that says it is a replica never used.
@Suite(
    .enabled(if: RedisServer.isInstalled, Comment(rawValue: RedisServer.notInstalledMessage)), .timeLimit(.minutes(1)))
struct RedisSentinelClientTests {
    @Test func parsesTheSentinelList() throws {
        let sentinels = try RedisSentinels(
            list: "10.0.0.1:26380, sentinel-b ,[::1]:26381", masterName: "mymaster", password: RedisPassword("pw"))
        #expect(sentinels.addresses.map(\.host) == ["10.0.0.1", "sentinel-b", "::1"])
        #expect(sentinels.addresses.map(\.port) == [26380, 26379, 26381])
        #expect(sentinels.addresses.allSatisfy { $0.password?.revealed == "pw" })
        #expect(!"\(sentinels)".contains("pw"))
    }

    @Test(arguments: [(" , ", "mymaster", "no sentinel"), ("a:1", "my master", "one word"), ("a:x", "m", "port")])
    func refusesAListOrNameItCannotUse(_ list: String, _ master: String, _ reason: String) {
        #expect { _ = try RedisSentinels(list: list, masterName: master) } throws: { "\($0)".contains(reason) }
    }

    @Test func findsTheMasterThroughTheSentinel() async throws {
        try await withRedisServer { master in
            try await withServer(try await RedisServer.startSentinel(monitoring: master, name: "cache")) { sentinel in
                var configuration = RedisConfiguration(endpoint: RedisEndpoint(host: "nowhere.invalid"))
                    .withTestTimeouts()
                configuration.sentinels = RedisSentinels(addresses: [sentinel.endpoint], masterName: "cache")
                try await withRedisClient(configuration) { client in
                    let count = try await client.incr("n")
                    #expect(count == 1)
                }
                try await withRedisClient(master.configuration()) { direct in
                    let stored = try await direct.get("n")
                    #expect(stored == Array("1".utf8))
                }
            }
        }
    }

    @Test func refusesAServerThatSaysItIsAReplica() async throws {
        try await withRedisServer { master in
            try await withRedisServer(arguments: ["--replicaof", "127.0.0.1", String(master.port)]) { replica in
                // A sentinel told to watch the replica as a master names it: ROLE must catch that.
                try await withServer(try await RedisServer.startSentinel(monitoring: replica, name: "wrong")) {
                    sentinel in
                    var configuration = RedisConfiguration(endpoint: RedisEndpoint(host: "nowhere.invalid"))
                        .withTestTimeouts()
                    configuration.sentinels = RedisSentinels(addresses: [sentinel.endpoint], masterName: "wrong")
                    try await withRedisClient(configuration) { client in
                        await #expect {
                            try await client.send(["GET", "n"])
                        } throws: { error in
                            "\(error)".contains("127.0.0.1:\(replica.port) is a slave, not the master")
                        }
                    }
                }
            }
        }
    }

    @Test func saysWhenNoSentinelNamesTheMaster() async throws {
        try await withRedisServer { master in
            try await withServer(try await RedisServer.startSentinel(monitoring: master, name: "cache")) { sentinel in
                var configuration = RedisConfiguration(endpoint: RedisEndpoint(host: "nowhere.invalid"))
                    .withTestTimeouts()
                configuration.sentinels = RedisSentinels(addresses: [sentinel.endpoint], masterName: "other")
                try await withRedisClient(configuration) { client in
                    await #expect {
                        try await client.ping()
                    } throws: { error in
                        "\(error)".contains("knows no master other")
                    }
                }
            }
        }
    }
}
