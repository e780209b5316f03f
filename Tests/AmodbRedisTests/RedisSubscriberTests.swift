import AmodbRedis
import AmodbRedisTestSupport
import Testing

/// Fill announcements: `PUBLISH` on the command client, a dedicated subscriber connection.
@Suite(
    .enabled(if: RedisServer.isInstalled, Comment(rawValue: RedisServer.notInstalledMessage)), .timeLimit(.minutes(1)))
struct RedisSubscriberTests {
    @Test
    func receivesWhatIsPublishedAndSubscribesAgainAfterARestart() async throws {
        try await withRedisServer { server in
            try await withRedisClient(server.configuration()) { client in
                let subscriber = RedisSubscriber(configuration: server.configuration())
                var messages = subscriber.messages.makeAsyncIterator()
                try await subscriber.subscribe("amodb-proxy:fills")
                let heard = try await client.publish("amodb-proxy:fills", Array("/3/movie/550".utf8))
                #expect(heard == 1)
                _ = try await client.publish("other-channel", [1])
                _ = try await client.publish("amodb-proxy:fills", [0, 13, 10, 255])
                #expect(
                    await messages.next()
                        == RedisMessage(channel: "amodb-proxy:fills", payload: Array("/3/movie/550".utf8)))
                #expect(await messages.next() == RedisMessage(channel: "amodb-proxy:fills", payload: [0, 13, 10, 255]))

                try await server.restart()
                // Once the subscriber is back, a publish reaches it without a new subscribe.
                #expect(
                    await eventuallySucceeds {
                        guard try await client.publish("amodb-proxy:fills", Array("again".utf8)) == 1 else {
                            throw RedisError.connectionClosed
                        }
                    })
                #expect(
                    await messages.next() == RedisMessage(channel: "amodb-proxy:fills", payload: Array("again".utf8)))
                await subscriber.shutdown()
                #expect(await messages.next() == nil)
            }
        }
    }
}
