import AmodbRedis
import Testing

struct RedisEndpointTests {
    @Test(arguments: [
        ("redis://localhost", RedisEndpoint(host: "localhost")),
        ("redis://redis:6380", RedisEndpoint(host: "redis", port: 6380)),
        ("redis://10.0.0.5:6379/3", RedisEndpoint(host: "10.0.0.5", database: 3)),
        ("redis://:s3cret@redis/1", RedisEndpoint(host: "redis", password: RedisPassword("s3cret"), database: 1)),
        (
            "redis://proxy:s3cret@redis:7000",
            RedisEndpoint(host: "redis", port: 7000, username: "proxy", password: RedisPassword("s3cret"))
        ),
        (
            "redis://proxy:p%40ss%3Aword@redis",
            RedisEndpoint(host: "redis", username: "proxy", password: RedisPassword("p@ss:word"))
        ),
        ("redis://:a@b@redis", RedisEndpoint(host: "redis", password: RedisPassword("a@b"))),
        ("REDIS://redis/", RedisEndpoint(host: "redis")),
        ("redis://[::1]:6390/2", RedisEndpoint(host: "::1", port: 6390, database: 2)),
        (
            "rediss://default:s3cret@cache.example:6380",
            RedisEndpoint(
                host: "cache.example", port: 6380, username: "default", password: RedisPassword("s3cret"), usesTLS: true
            )
        ),
        ("REDISS://[::1]", RedisEndpoint(host: "::1", usesTLS: true)),
    ])
    func parsesTheURLForms(_ url: String, _ expected: RedisEndpoint) throws {
        #expect(try RedisEndpoint(url: url) == expected)
    }

    @Test(arguments: [
        ("http://redis:6379", "scheme \"http\""),
        ("redis+tls://redis:6380", "expected redis:// or rediss://"),
        ("redis://", "host is empty"),
        ("redis://:pw@:6379", "host is empty"),
        ("redis://redis:abc", "port \"abc\" is not a number"),
        ("redis://redis:", "port \"\" is not a number"),
        ("redis://redis:70000", "not a number from 1 to 65535"),
        ("redis://redis/zero", "database \"zero\" is not a number"),
        ("redis.example:6379", "expected redis[s]://"),
        ("redis://justapassword@redis", "colon before the password"),
        ("redis://:bad%zz@redis", "malformed %-escape"),
    ])
    func refusesMalformedURLsWithOneLineNamingNoSetting(_ url: String, _ reason: String) {
        #expect {
            _ = try RedisEndpoint(url: url)
        } throws: { error in
            // The client reads no setting: the proxy words which one the URL came from.
            let text = "\(error)"
            return text.contains(reason) && !text.contains("AMODB") && !text.contains("\n")
        }
    }

    @Test(arguments: [
        "redis://:hunter2@redis:6379", "redis://app:hunter2@redis/4", "rediss://:hunter2@redis",
        "redis://:hunter2@redis:port",
    ])
    func neverShowsThePassword(_ url: String) throws {
        let texts: [String]
        do {
            let configuration = try RedisConfiguration(url: url)
            var dumped = ""
            dump(configuration, to: &dumped)
            texts = [
                "\(configuration)", "\(configuration.endpoint)", String(reflecting: configuration.endpoint), dumped,
            ]
            #expect(configuration.endpoint.password?.revealed == "hunter2")
        } catch {
            texts = ["\(error)", String(reflecting: error)]
        }
        for text in texts { #expect(!text.contains("hunter2"), "\(text)") }
    }

    @Test
    func describesItselfAsAURLWithThePasswordRedacted() throws {
        #expect(
            try RedisEndpoint(url: "redis://app:pw@redis:7000/2").description == "redis://app:<redacted>@redis:7000/2")
        #expect(try RedisEndpoint(url: "redis://redis").description == "redis://redis:6379/0")
        #expect(try RedisEndpoint(url: "rediss://:pw@redis:6380").description == "rediss://:<redacted>@redis:6380/0")
    }
}
