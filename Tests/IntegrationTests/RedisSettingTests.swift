import AmodbProxy
import AmodbRedis
import AmodbTestSupport
import Testing

/// `AMODB_REDIS_URL` and `AMODB_REDIS_PREFIX`, as the built binary reads them: a malformed
/// URL stops it with one line naming the setting, and the password is never shown.
@Suite(.timeLimit(.minutes(1)))
struct RedisSettingTests {
    @Test(arguments: [
        ("another scheme", "http://cache:6379"),
        ("a port that is not a number", "redis://cache:sixty"),
        ("an empty host", "redis://:secret-pass-1@:6379"),
        ("a database that is not a number", "redis://cache:6379/zero"),
    ])
    func aMalformedURLExitsNonZeroWithOneLineNamingTheSetting(_ case: String, url: String) async throws {
        let outcome = try await ProxyBinary().run(
            ["--check-config"], environment: ["AMODB_KEY": "k", "AMODB_REDIS_URL": url])
        #expect(outcome.status != 0)
        let lines = outcome.standardError.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(lines.first?.contains("AMODB_REDIS_URL") == true)
        #expect(!outcome.standardError.contains("secret-pass-1"))
    }

    @Test func checkConfigShowsTheRedisURLWithItsPasswordRedacted() async throws {
        let outcome = try await ProxyBinary().run(
            ["--check-config"],
            environment: [
                "AMODB_KEY": "k", "AMODB_REDIS_URL": "redis://proxy:s3cret-pa55@cache.internal:6380/2",
                "AMODB_REDIS_PREFIX": "staging:",
            ])
        #expect(outcome.status == 0)
        let lines = outcome.standardOutput.split(separator: "\n")
        #expect(lines.contains("AMODB_REDIS_URL=redis://proxy:<redacted>@cache.internal:6380/2"))
        #expect(lines.contains("AMODB_REDIS_PREFIX=staging:"))
        #expect(!outcome.standardOutput.contains("s3cret-pa55") && !outcome.standardError.contains("s3cret-pa55"))
    }

    @Test func withoutTheURLNothingIsShared() throws {
        guard
            case .serve(let configuration) = try ConfigurationLoader.load(
                arguments: [], environment: ["AMODB_KEY": "k"])
        else {
            Issue.record("not serve")
            return
        }
        #expect(configuration.redis == nil)
        #expect(configuration.redisPrefix == "amodb-proxy:")
    }

    @Test(arguments: [
        (
            ["AMODB_REDIS_URL": "rediss://cache:6380", "AMODB_REDIS_CA_FILE": "/nonexistent/ca.pem"],
            "AMODB_REDIS_CA_FILE"
        ),
        (["AMODB_REDIS_URL": "redis://cache:6379", "AMODB_REDIS_CA_FILE": "/etc/hostname"], "AMODB_REDIS_CA_FILE"),
        (["AMODB_REDIS_URL": "redis://cache:6379", "AMODB_REDIS_KEY_FILE": "/etc/hostname"], "AMODB_REDIS_KEY_FILE"),
        // A certificate without its key: the key's setting is the one to set.
        (
            ["AMODB_REDIS_URL": "rediss://cache:6380", "AMODB_REDIS_CERT_FILE": "/etc/hostname"],
            "AMODB_REDIS_KEY_FILE"
        ),
        (["AMODB_REDIS_SENTINELS": "10.0.0.1:26379"], "AMODB_REDIS_MASTER"),
        (["AMODB_REDIS_MASTER": "mymaster"], "AMODB_REDIS_SENTINELS"),
        (["AMODB_REDIS_SENTINELS": "10.0.0.1:x", "AMODB_REDIS_MASTER": "mymaster"], "AMODB_REDIS_SENTINELS"),
        // Cluster mode: a node to learn the cluster from, database 0, no Sentinel, a prefix that can be a hash tag.
        (["AMODB_REDIS_CLUSTER": "on"], "AMODB_REDIS_URL"),
        (["AMODB_REDIS_CLUSTER": "on", "AMODB_REDIS_URL": "redis://cache:6379/2"], "AMODB_REDIS_URL"),
        (
            [
                "AMODB_REDIS_CLUSTER": "on", "AMODB_REDIS_SENTINELS": "10.0.0.1:26379",
                "AMODB_REDIS_MASTER": "mymaster",
            ], "AMODB_REDIS_CLUSTER"
        ),
        (
            ["AMODB_REDIS_CLUSTER": "on", "AMODB_REDIS_URL": "redis://cache:6379", "AMODB_REDIS_PREFIX": "{app}:"],
            "AMODB_REDIS_PREFIX"
        ),
        (["AMODB_REDIS_CLUSTER": "maybe", "AMODB_REDIS_URL": "redis://cache:6379"], "AMODB_REDIS_CLUSTER"),
    ])
    func tlsFilesAndSentinelsThatCannotWorkStopTheStartNamingTheSetting(
        _ settings: [String: String], _ setting: String
    ) {
        #expect {
            _ = try ConfigurationLoader.load(arguments: [], environment: settings.merging(["AMODB_KEY": "k"]) { $1 })
        } throws: { error in
            (error as? ConfigurationError)?.setting == setting && "\(error)".contains(setting)
        }
    }

    @Test func sentinelsNeedNoURLAndKeepItsCredentials() throws {
        guard
            case .serve(let bare) = try ConfigurationLoader.load(
                arguments: [],
                environment: [
                    "AMODB_KEY": "k", "AMODB_REDIS_SENTINELS": "10.0.0.1:26379,10.0.0.2",
                    "AMODB_REDIS_MASTER": "mymaster", "AMODB_REDIS_SENTINEL_PASSWORD": "sentinel-pw",
                ]),
            case .serve(let withURL) = try ConfigurationLoader.load(
                arguments: [],
                environment: [
                    "AMODB_KEY": "k", "AMODB_REDIS_SENTINELS": "10.0.0.1", "AMODB_REDIS_MASTER": "mymaster",
                    "AMODB_REDIS_URL": "redis://app:pw@ignored:1/3",
                ])
        else {
            Issue.record("not serve")
            return
        }
        let sentinels = try #require(bare.redis?.sentinels)
        #expect(sentinels.masterName == "mymaster")
        #expect(sentinels.addresses.map(\.port) == [26379, 26379])
        #expect(sentinels.addresses.allSatisfy { $0.password?.revealed == "sentinel-pw" })
        #expect(withURL.redis?.endpoint.username == "app" && withURL.redis?.endpoint.database == 3)
        #expect(withURL.redis?.sentinels?.addresses.first?.password == nil)
    }

    @Test func clusterModeTagsTheKeysWithThePrefix() throws {
        guard
            case .serve(let configuration) = try ConfigurationLoader.load(
                arguments: ["--redis-cluster", "on"],
                environment: [
                    "AMODB_KEY": "k", "AMODB_REDIS_URL": "rediss://app:pw@clustercfg.example:6379",
                    "AMODB_REDIS_PREFIX": "shop:",
                ])
        else {
            Issue.record("not serve")
            return
        }
        let cluster = try #require(configuration.redis?.cluster)
        #expect(cluster.keyPrefix == "{shop:}")
        #expect(cluster.slot == RedisSlot.of("{shop:}budget:state"))
        #expect(configuration.redis?.endpoint.host == "clustercfg.example")
    }

    /// A configuration built in code meets the same rules as one the loader read.
    @Test func aClusterConfigurationBuiltInCodeKeepsToTheRules() throws {
        var configuration = ProxyHarness.configuration()
        var redis = RedisConfiguration(endpoint: RedisEndpoint(host: "node-1"))
        redis.cluster = RedisClusterMode(hashTag: "amodb-proxy:")
        configuration.redis = redis
        #expect(throws: Never.self) { try configuration.validated() }
        configuration.redisPrefix = "other:"
        #expect { try configuration.validated() } throws: {
            ($0 as? ConfigurationError)?.setting == "AMODB_REDIS_PREFIX"
        }
        configuration.redisPrefix = "amodb-proxy:"
        configuration.redis?.endpoint.database = 1
        #expect { try configuration.validated() } throws: { ($0 as? ConfigurationError)?.setting == "AMODB_REDIS_URL" }
        configuration.redis?.endpoint.database = 0
        configuration.redis?.sentinels = RedisSentinels(addresses: [RedisEndpoint(host: "s")], masterName: "m")
        #expect { try configuration.validated() } throws: {
            ($0 as? ConfigurationError)?.setting == "AMODB_REDIS_CLUSTER"
        }
    }

    @Test(arguments: ["", "has space", String(repeating: "p", count: 65)])
    func aPrefixThatCannotNamespaceKeysIsRefused(_ prefix: String) async throws {
        let outcome = try await ProxyBinary().run(
            ["--check-config"], environment: ["AMODB_KEY": "k", "AMODB_REDIS_PREFIX": prefix])
        #expect(outcome.status != 0)
        #expect(outcome.standardError.contains("AMODB_REDIS_PREFIX"))
    }
}
