import AmodbRedis
import AmodbRedisTestSupport
import AmodbTestSupport
import Testing

/// The client against a real `redis-server`, one fresh server per test.
@Suite(
    .enabled(if: RedisServer.isInstalled, Comment(rawValue: RedisServer.notInstalledMessage)), .timeLimit(.minutes(1)))
struct RedisClientTests {
    @Test
    func storesAndReadsBackBinaryValues() async throws {
        try await withRedisServer { server in
            try await withRedisClient(server.configuration()) { client in
                let value = (0...255).map(UInt8.init) + Array("\r\n$-1\r\n*0\r\n".utf8)
                let written = try await client.set("bin", value)
                #expect(written)
                let readBack = try await client.get("bin")
                #expect(readBack == value)
                let missing = try await client.get("missing")
                #expect(missing == nil)
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
                    let value = try reply.get()
                    #expect(value == .bulk("v\(index)"))
                }
                // And from many tasks at once, each awaiting its own reply.
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<1000 {
                        group.addTask {
                            let count = try await client.incr("counter-\(index % 10)")
                            #expect(count >= 1)
                            let stored = try await client.get("k\(index)")
                            #expect(stored == Array("v\(index)".utf8))
                        }
                    }
                    try await group.waitForAll()
                }
                let counter = try await client.get("counter-3")
                #expect(counter == Array("100".utf8))
            }
        }
    }

    @Test
    func logsInWithThePasswordFromTheURL() async throws {
        try await withRedisServer(password: "pa$$ word") { server in
            let url = "redis://:pa%24%24%20word@127.0.0.1:\(server.port)"
            let configuration = try RedisConfiguration(url: url).withTestTimeouts()
            try await withRedisClient(configuration) { client in
                try await client.set("k", Array("v".utf8))
                let stored = try await client.get("k")
                #expect(stored == Array("v".utf8))
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
                let user = try await client.send(["ACL", "WHOAMI"])
                #expect(user == .bulk("proxy"))
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
            let zero = try RedisConfiguration(url: "redis://127.0.0.1:\(server.port)/0").withTestTimeouts()
            let five = try RedisConfiguration(url: "redis://127.0.0.1:\(server.port)/5").withTestTimeouts()
            try await withRedisClient(zero) { first in
                try await withRedisClient(five) { second in
                    try await first.set("shared-name", Array("zero".utf8))
                    try await second.set("shared-name", Array("five".utf8))
                    let inZero = try await first.get("shared-name")
                    #expect(inZero == Array("zero".utf8))
                    let inFive = try await second.get("shared-name")
                    #expect(inFive == Array("five".utf8))
                    let keysInFive = try await second.send(["DBSIZE"])
                    #expect(keysInFive == .integer(1))
                }
            }
        }
    }

    @Test
    func runsAScriptByItsSHA1AndSendsItAgainAfterScriptFlush() async throws {
        try await withRedisServer { server in
            try await withRedisClient(server.configuration()) { client in
                let script = RedisScript("return {KEYS[1], ARGV[1], redis.call('INCR', KEYS[1])}")
                let loadedAs = try await client.send(["SCRIPT", "LOAD", .bulk(script.source)])
                #expect(loadedAs == .bulk(script.sha1))
                let firstRun = try await client.run(script, keys: ["n"], arguments: ["a"])
                #expect(firstRun == .array([.bulk("n"), .bulk("a"), .integer(1)]))
                _ = try await client.send(["SCRIPT", "FLUSH"])
                await #expect(throws: RedisError.self) {
                    _ = try await client.send(["EVALSHA", .bulk(script.sha1), 0])
                }
                let afterFlush = try await client.run(script, keys: ["n"], arguments: ["b"])
                #expect(afterFlush == .array([.bulk("n"), .bulk("b"), .integer(2)]))
                // EVAL cached it: EVALSHA alone works again.
                let cachedAgain = try await client.send(["EVALSHA", .bulk(script.sha1), 1, "n", "c"])
                #expect(cachedAgain == .array([.bulk("n"), .bulk("c"), .integer(3)]))
            }
        }
    }

    @Test
    func timesOutACommandBehindABusyServerAndRecovers() async throws {
        try await withRedisServer { server in
            var configuration = server.configuration(commandTimeout: .milliseconds(50))
            configuration.connectionCount = 1
            try await withRedisClient(configuration) { client in
                // the session is up, however loaded the machine
                _ = try await client.send(["PING"], timeout: .seconds(2))
                // CLIENT PAUSE WRITE holds writes, as a server busy in a slow command (DEBUG SLEEP)
                // would, but is known to be in force once it answers, and lets UNPAUSE through.
                try await withRedisClient(server.configuration()) { admin in
                    _ = try await admin.send(["CLIENT", "PAUSE", "60000", "WRITE"])
                    let started = ContinuousClock.now
                    await #expect(throws: RedisError.timedOut(.command)) { try await client.set("k", [1]) }
                    // The 50 ms timeout, not the 60 s pause: a bound far from both, so a loaded machine cannot cross it.
                    #expect(ContinuousClock.now - started < .seconds(20))
                    _ = try await admin.send(["CLIENT", "UNPAUSE"])
                }
                #expect(await eventuallySucceeds { try await client.set("k", [2]) })
            }
        }
    }

    @Test(arguments: [true, false])
    func refusesCommandsPastThePendingLimitAtOnce(connectedFirst: Bool) async throws {
        try await withRedisServer { server in
            var configuration = server.configuration()
            configuration.connectionCount = 1
            configuration.maxPendingCommands = 2
            try await withRedisClient(configuration) { client in
                if connectedFirst { try await client.ping() }
                // One batch is submitted in one go, before any reply can be read: the third finds
                // two commands waiting (for their replies, or for the session) and is refused.
                let replies = await client.pipeline([["SET", "a", "1"], ["SET", "b", "2"], ["SET", "c", "3"]])
                #expect(replies.map { try? $0.get() } == [.simpleString("OK"), .simpleString("OK"), nil])
                #expect(throws: RedisError.overloaded) { try replies[2].get() }
                let third = try await client.get("c")
                #expect(third == nil)
            }
        }
    }

    @Test
    func timesOutAgainstAStoppedServerInsteadOfWaiting() async throws {
        try await withRedisServer { server in
            var configuration = server.configuration(commandTimeout: .milliseconds(50))
            configuration.connectionCount = 1  // the GET goes out on the session the SET used
            try await withRedisClient(configuration) { client in
                _ = try await client.send(["SET", "k", "v"], timeout: .seconds(2))
                server.pause()
                let started = ContinuousClock.now
                await #expect(throws: RedisError.timedOut(.command)) { _ = try await client.get("k") }
                #expect(ContinuousClock.now - started < .seconds(20))  // no reply ever comes: only the timeout ends it
                server.resume()
                #expect(await eventuallySucceeds { _ = try await client.get("k") })
            }
        }
    }

    @Test
    func connectsAheadOfTheFirstCommandWhenAsked() async throws {
        try await withRedisServer { server in
            try await withRedisClient(server.configuration()) { client in
                #expect(!client.isConnected)
                client.connect()
                #expect(await eventually { client.isConnected })
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
                let after = try await client.get("after")
                #expect(after == Array("2".utf8))
                let before = try await client.get("before")
                #expect(before == nil)  // nothing persisted
                #expect(client.isConnected)
            }
        }
    }

    @Test
    func resolvesAHostName() async throws {
        try await withRedisServer { server in
            // getaddrinfo runs on a thread of its own; each address it gives is tried in turn.
            let configuration = try RedisConfiguration(url: "redis://localhost:\(server.port)").withTestTimeouts()
            try await withRedisClient(configuration) { client in
                let written = try await client.set("by-name", Array("localhost".utf8))
                #expect(written)
                #expect(client.isConnected)
            }
            // The name led to this server: what was written through it is there by address.
            try await withRedisClient(server.configuration()) { client in
                let stored = try await client.get("by-name")
                #expect(stored == Array("localhost".utf8))
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
        let port = try await withRedisServer { $0.port }  // a port that was just free
        var configuration = RedisConfiguration(endpoint: RedisEndpoint(host: "127.0.0.1", port: port))
        configuration.commandTimeout = .seconds(60)
        try await withRedisClient(configuration) { client in
            let started = ContinuousClock.now
            await #expect { _ = try await client.get("k") } throws: { error in
                guard case RedisError.unavailable(let reason) = error else { return false }
                return reason.contains("connect")
            }
            #expect(ContinuousClock.now - started < .seconds(20))  // the refused connect, not the 60 s command timeout
        }
    }

    @Test
    func closesOnBytesThatAreNotRESP() async throws {
        // An HTTP server where Redis should be, answering our PING as it would a head it gave
        // up on: "HTTP/1.1 408 …", which is no RESP reply.
        let http408 = Array("HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)
        try await withServer(try HostileRedis(replies: [http408])) { (http: HostileRedis) async throws in
            var configuration = RedisConfiguration(endpoint: RedisEndpoint(host: "127.0.0.1", port: http.port))
            configuration.commandTimeout = .seconds(5)
            configuration.connectTimeout = .seconds(5)
            try await withRedisClient(configuration) { client in
                await #expect(throws: RedisError.protocolViolation(.unknownType(UInt8(ascii: "H")))) {
                    try await client.ping()
                }
                #expect(!client.isConnected)
            }
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
                guard case .array(let elements) = reply, elements.count == 2, case .error(let message) = elements[1]
                else {
                    Issue.record("unexpected \(reply)")
                    return
                }
                #expect(message.hasPrefix("WRONGTYPE"))
                // And the connection goes on serving.
                let counter = try await client.incr("n")
                #expect(counter == 1)
            }
        }
    }

    @Test
    func typedHelpersSpeakSetNXPXExpirePttlDelAndPublish() async throws {
        try await withRedisServer { server in
            try await withRedisClient(server.configuration()) { client in
                let leased = try await client.set(
                    "lease", Array("replica-a".utf8), condition: .ifNotExists, expiry: .milliseconds(60_000))
                #expect(leased)
                let secondLease = try await client.set(
                    "lease", Array("replica-b".utf8), condition: .ifNotExists, expiry: .milliseconds(60_000))
                #expect(!secondLease)
                let holder = try await client.get("lease")
                #expect(holder == Array("replica-a".utf8))
                guard case .milliseconds(let left) = try await client.pttl("lease") else {
                    Issue.record("lease has no TTL")
                    return
                }
                // PX, not EX (that would be 60,000 s); and a loaded machine may take seconds between the calls.
                #expect(left > 30_000 && left <= 60_000)
                let written = try await client.set("absent", [1], condition: .ifExists)
                #expect(!written)
                try await client.set("plain", [1], expiry: .seconds(100))
                let expiring = try await client.expire("plain", seconds: 10)
                #expect(expiring)
                let expiringAbsent = try await client.expire("absent", seconds: 10)
                #expect(!expiringAbsent)
                try await client.set("forever", [1])
                let forever = try await client.pttl("forever")
                #expect(forever == .persistent)
                let absent = try await client.pttl("absent")
                #expect(absent == .missing)
                let deleted = try await client.del(["lease", "plain", "absent"])
                #expect(deleted == 2)
                let receivers = try await client.publish("fills", Array("key".utf8))
                #expect(receivers == 0)
            }
        }
    }
}
