import AmodbSockets
import Dispatch

/// A message published on a channel this subscriber listens to.
public struct RedisMessage: Sendable, Equatable {
    /// The channel it was published on.
    public let channel: String
    /// What was published.
    public let payload: [UInt8]

    /// A message as received.
    public init(channel: String, payload: [UInt8]) {
        self.channel = channel
        self.payload = payload
    }
}

/// A dedicated connection in subscriber mode (a subscribed RESP2 connection takes no other
/// commands), for fill announcements: `messages` yields what is published on the channels
/// subscribed to. It reconnects like any connection and subscribes again; what was published
/// while it was away is lost, so a waiter must not rely on announcements alone.
public final class RedisSubscriber: Sendable {
    /// Everything published on the subscribed channels, in order; the oldest are dropped
    /// past 1,024 unread.
    public let messages: AsyncStream<RedisMessage>
    private let connection: RedisConnection
    private let continuation: AsyncStream<RedisMessage>.Continuation

    /// A subscriber for `configuration`'s server; it connects on the first `subscribe`.
    public init(configuration: RedisConfiguration) {
        let (stream, continuation) = AsyncStream.makeStream(
            of: RedisMessage.self, bufferingPolicy: .bufferingNewest(1024))
        messages = stream
        self.continuation = continuation
        connection = RedisConnection(
            configuration: configuration,
            queue: DispatchQueue(label: "amodb-redis.subscriber", target: IOQueues.target),
            tlsContext: RedisTLSContext.make(for: configuration),
            onMessage: { continuation.yield($0) }
        )
    }

    /// Subscribes to `channel` (and again after every reconnection); returns once Redis acknowledged it.
    public func subscribe(_ channel: String, timeout: Duration? = nil) async throws(RedisError) {
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<RedisValue, RedisError>, Never>) in
            connection.subscribe(channel, timeout: timeout) { continuation.resume(returning: $0) }
        }
        let reply = try result.get()
        guard case .array(let items) = reply, items.first?.bytes == Array("subscribe".utf8) else {
            throw .unexpectedReply(reply.description)
        }
    }

    /// Closes the connection and finishes `messages`.
    public func shutdown() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            connection.shutdown { done.resume() }
        }
        continuation.finish()
    }
}
