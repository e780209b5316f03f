import AmodbRedis
import AmodbRedisTestSupport
import AmodbTestSupport
import Testing

/// The client against a real `redis-server`, one fresh server per test.
@Suite(.enabled(if: RedisServer.isInstalled, Comment(rawValue: RedisServer.notInstalledMessage)), .timeLimit(.minutes(1)))
struct RedisClientTests {
    @Test
    func storesAndReadsBackBinaryValues() async throws {
        try await withRedisServer { server in
            try await withRedisClient(server.configuration()) { client in
                let value = (0...255).map(UInt8.init) + Array("\r\n$-1\r\n*0\r\n".utf8)
                let got1 = try await client.set("bin", value)
                #expect(got1)
                let got2 = try await client.get("bin")
                #expect(got2 == value)
                let got3 = try await client.get("missing")
                #expect(got3 == nil)
            }
        }
    }

    @Test
    func pipelinesAThousandCommandsAndMatchesRepliesInOrder() async throws {
        try await withRedisServer { server in
            try await withRedisClient(server.configuration()) { client in
                let sets: [[RedisValue]] = (0..<1000).map { ["SET", .bulk("k\($0)"), .bulk("v\($0)")] }
                let setReplies = await client.pipeline(sets)
                #expect(setReplies.allSatisfy { (try? $0.get()) == .simpleString("OK") })
                let gets: [[RedisValue]] = (0..<1000).map { ["GET", .bulk("k\($0)")] }
                let getReplies = await client.pipeline(gets)
                #expect(getReplies.count == 1000)
                for (index, reply) in getReplies.enumerated() {
                    let got4 = try reply.get()
                    #expect(got4 == .bulk("v\(index)"))
                }
                // And from many tasks at once, each awaiting its own reply.
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<1000 {
                        group.addTask {
                            let got5 = try await client.incr("counter-\(index % 10)")
                            #expect(got5 >= 1)
                            let got6 = try await client.get("k\(index)")
                            #expect(got6 == Array("v\(index)".utf8))
                        }
                    }
                    try await group.waitForAll()
                }
                let got7 = try await client.get("counter-3")
                #expect(got7 == Array("100".utf8))
            }
        }
    }

    @Test
    func logsInWithThePasswordFromTheURL() async throws {
        try await withRedisServer(password: "pa$$ word") { server in
            let url = "redis://:pa%24%24%20word@127.0.0.1:\(server.port)"
            var configuration = try RedisConfiguration(url: url)
            configuration.commandTimeout = .seconds(2)
            try await withRedisClient(configuration) { client in
                try await client.set("k", Array("v".utf8))
                let got8 = try await client.get("k")
                #expect(got8 == Array("v".utf8))
            }
            // Without the password, every command is refused with a typed NOAUTH.
            var anonymous = server.configuration()
            anonymous.endpoint.password = nil
            try await withRedisClient(anonymous) { client in
                await #expect(throws: RedisError.server(RedisServerError("NOAUTH Authentication required."))) {
                    _ = try await client.get("k")
                }
            }
        }
    }

    @Test
    func logsInAsAnACLUserAndReportsAWrongPasswordAsTyped() async throws {
        try await withRedisServer { server in
            try await withRedisClient(server.configuration()) { admin in
                _ = try await admin.send(["ACL", "SETUSER", "proxy", "on", ">proxy-pw", "~amodb:*", "+@all"])
            }
            var configuration = server.configuration()
            configuration.endpoint.username = "proxy"
            configuration.endpoint.password = RedisPassword("proxy-pw")
            try await withRedisClient(configuration) { client in
                let got9 = try await client.send(["ACL", "WHOAMI"])
                #expect(got9 == .bulk("proxy"))
                try await client.set("amodb:k", Array("v".utf8))
                // The ACL's key pattern holds: proof that we are logged in as that user.
                await #expect { _ = try await client.get("other") } throws: { error in
                    guard case RedisError.server(let reply) = error else { return false }
                    return reply.code == "NOPERM"
                }
            }
            configuration.endpoint.password = RedisPassword("wrong")
            try await withRedisClient(configuration) { client in
                await #expect { _ = try await client.get("amodb:k") } throws: { error in
                    guard case RedisError.server(let reply) = error else { return false }
                    return reply.code == "WRONGPASS" && !"\(error)".contains("wrong")
                }
            }
        }
    }

    @Test
    func selectsTheDatabaseFromTheURLSoDatabasesStayApart() async throws {
        try await withRedisServer { server in
            let zero = try RedisConfiguration(url: "redis://127.0.0.1:\(server.port)/0")
            let five = try RedisConfiguration(url: "redis://127.0.0.1:\(server.port)/5")
            try await withRedisClient(zero) { first in
                try await withRedisClient(five) { second in
                    try await first.set("shared-name", Array("zero".utf8))
                    try await second.set("shared-name", Array("five".utf8))
                    let got10 = try await first.get("shared-name")
                    #expect(got10 == Array("zero".utf8))
                    let got11 = try await second.get("shared-name")
                    #expect(got11 == Array("five".utf8))
                    let got12 = try await second.send(["DBSIZE"])
                    #expect(got12 == .integer(1))
                }
            }
        }
    }

    @Test
    func runsAScriptByItsSHA1AndSendsItAgainAfterScriptFlush() async throws {
        try await withRedisServer { server in
            try await withRedisClient(server.configuration()) { client in
                let script = RedisScript("return {KEYS[1], ARGV[1], redis.call('INCR', KEYS[1])}")
                let got13 = try await client.send(["SCRIPT", "LOAD", .bulk(script.source)])
                #expect(got13 == .bulk(script.sha1))
                let got14 = try await client.run(script, keys: ["n"], arguments: ["a"])
                #expect(got14 == .array([.bulk("n"), .bulk("a"), .integer(1)]))
                _ = try await client.send(["SCRIPT", "FLUSH"])
                await #expect(throws: RedisError.self) { _ = try await client.send(["EVALSHA", .bulk(script.sha1), 0]) }
                let got15 = try await client.run(script, keys: ["n"], arguments: ["b"])
                #expect(got15 == .array([.bulk("n"), .bulk("b"), .integer(2)]))
                // EVAL cached it: EVALSHA alone works again.
                let got16 = try await client.send(["EVALSHA", .bulk(script.sha1), 1, "n", "c"])
                #expect(got16 == .array([.bulk("n"), .bulk("c"), .integer(3)]))
            }
        }
    }

    @Test
    func timesOutACommandBehindABusyServerAndRecovers() async throws {
        try await withRedisServer { server in
            var configuration = server.configuration(commandTimeout: .milliseconds(50))
            configuration.connectionCount = 1
            try await withRedisClient(configuration) { client in
                try await client.ping()
                // CLIENT PAUSE holds every other client's commands, as a server busy in a
                // slow command (DEBUG SLEEP) would, but is known to be in force once it answers.
                try await withRedisClient(server.configuration()) { admin in
                    _ = try await admin.send(["CLIENT", "PAUSE", "400", "ALL"])
                }
                let started = ContinuousClock.now
                await #expect(throws: RedisError.timedOut(.command)) { _ = try await client.get("k") }
                #expect(ContinuousClock.now - started < .milliseconds(300))
                #expect(await eventuallySucceeds { try await client.ping() })
            }
        }
    }

    @Test
    func timesOutAgainstAStoppedServerInsteadOfWaiting() async throws {
        try await withRedisServer { server in
            var configuration = server.configuration(commandTimeout: .milliseconds(50))
            configuration.connectTimeout = .milliseconds(100)
            configuration.connectionCount = 1   // the GET goes out on the session the SET used
            try await withRedisClient(configuration) { client in
                try await client.set("k", Array("v".utf8))
                server.pause()
                let started = ContinuousClock.now
                await #expect(throws: RedisError.timedOut(.command)) { _ = try await client.get("k") }
                #expect(ContinuousClock.now - started < .milliseconds(400))
                server.resume()
                #expect(await eventuallySucceeds { _ = try await client.get("k") })
            }
        }
    }

    @Test
    func reconnectsAfterTheServerRestarts() async throws {
        try await withRedisServer { server in
            try await withRedisClient(server.configuration()) { client in
                try await client.set("before", Array("1".utf8))
                #expect(client.isConnected)
                await server.stop()
                await #expect(throws: RedisError.self) { _ = try await client.get("before") }
                #expect(await eventually { !client.isConnected })
                try await server.restart()
                #expect(await eventuallySucceeds { try await client.set("after", Array("2".utf8)) })
                let got18 = try await client.get("after")
                #expect(got18 == Array("2".utf8))
                let before = try await client.get("before")
                #expect(before == nil)   // nothing persisted
                #expect(client.isConnected)
            }
        }
    }

    @Test
    func resolvesAHostName() async throws {
        try await withRedisServer { server in
            // getaddrinfo runs on a thread of its own; each address it gives is tried in turn.
            var configuration = try RedisConfiguration(url: "redis://localhost:\(server.port)")
            configuration.commandTimeout = .seconds(2)
            try await withRedisClient(configuration) { client in
                try await client.ping()
            }
        }
    }

    @Test
    func reportsAHostNameThatDoesNotResolve() async throws {
        var configuration = try RedisConfiguration(url: "redis://no-such-host.invalid:6379")
        configuration.connectTimeout = .seconds(5)
        configuration.commandTimeout = .seconds(6)
        try await withRedisClient(configuration) { client in
            await #expect { try await client.ping() } throws: { error in
                guard case RedisError.unavailable(let reason) = error else { return false }
                return reason.contains("getaddrinfo")
            }
        }
    }

    @Test
    func failsFastWhenNothingListens() async throws {
        let port = try await withRedisServer { $0.port }   // a port that was just free
        var configuration = RedisConfiguration(endpoint: RedisEndpoint(host: "127.0.0.1", port: port))
        configuration.commandTimeout = .seconds(5)
        try await withRedisClient(configuration) { client in
            let started = ContinuousClock.now
            await #expect { _ = try await client.get("k") } throws: { error in
                guard case RedisError.unavailable(let reason) = error else { return false }
                return reason.contains("connect")
            }
            #expect(ContinuousClock.now - started < .seconds(1))
        }
    }

    @Test
    func reportsServerErrorsAsTypedValues() async throws {
        try await withRedisServer { server in
            try await withRedisClient(server.configuration()) { client in
                _ = try await client.send(["LPUSH", "list", "x"])
                await #expect { _ = try await client.get("list") } throws: { error in
                    guard case RedisError.server(let reply) = error else { return false }
                    return reply.code == "WRONGTYPE"
                }
                await #expect { _ = try await client.send(["NOSUCHCOMMAND"]) } throws: { error in
                    guard case RedisError.server(let reply) = error else { return false }
                    return reply.code == "ERR"
                }
                await #expect(throws: RedisError.invalidArgument) { _ = try await client.send(["SET", "k", .null]) }
                // An error inside an array stays a value: the rest of the reply is kept.
                let reply = try await client.send(["EVAL", "return {1, redis.pcall('INCR', KEYS[1])}", 1, "list"])
                guard case .array(let elements) = reply, elements.count == 2, case .error(let message) = elements[1] else {
                    Issue.record("unexpected \(reply)")
                    return
                }
                #expect(message.hasPrefix("WRONGTYPE"))
                // And the connection goes on serving.
                let got19 = try await client.incr("n")
                #expect(got19 == 1)
            }
        }
    }

    @Test
    func typedHelpersSpeakSetNXPXExpirePttlDelAndPublish() async throws {
        try await withRedisServer { server in
            try await withRedisClient(server.configuration()) { client in
                let got20 = try await client.set("lease", Array("replica-a".utf8), condition: .ifNotExists, expiry: .milliseconds(5000))
                #expect(got20)
                let got21 = try await client.set("lease", Array("replica-b".utf8), condition: .ifNotExists, expiry: .milliseconds(5000))
                #expect(!got21)
                let got22 = try await client.get("lease")
                #expect(got22 == Array("replica-a".utf8))
                guard case .milliseconds(let left) = try await client.pttl("lease") else {
                    Issue.record("lease has no TTL")
                    return
                }
                #expect(left > 4000 && left <= 5000)
                let got23 = try await client.set("absent", [1], condition: .ifExists)
                #expect(!got23)
                try await client.set("plain", [1], expiry: .seconds(100))
                let got24 = try await client.expire("plain", seconds: 10)
                #expect(got24)
                let got25 = try await client.expire("absent", seconds: 10)
                #expect(!got25)
                try await client.set("forever", [1])
                let got26 = try await client.pttl("forever")
                #expect(got26 == .persistent)
                let got27 = try await client.pttl("absent")
                #expect(got27 == .missing)
                let got28 = try await client.del(["lease", "plain", "absent"])
                #expect(got28 == 2)
                let got29 = try await client.publish("fills", Array("key".utf8))
                #expect(got29 == 0)
            }
        }
    }
}
