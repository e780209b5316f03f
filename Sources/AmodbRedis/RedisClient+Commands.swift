/// Typed helpers for the commands the proxy will use; each checks the reply's shape and
/// throws `.unexpectedReply` for any other.
extension RedisClient {
    /// When `SET` may write.
    public enum SetCondition: Sendable {
        /// Always (plain `SET`).
        case always
        /// Only if the key does not exist (`NX`): a lease.
        case ifNotExists
        /// Only if the key exists (`XX`).
        case ifExists
    }

    /// How long a `SET` key lives.
    public enum Expiry: Sendable, Equatable {
        /// `EX`: whole seconds.
        case seconds(Int64)
        /// `PX`: milliseconds.
        case milliseconds(Int64)
    }

    /// What `PTTL` says about a key.
    public enum TimeToLive: Sendable, Equatable {
        /// No such key (`-2`).
        case missing
        /// The key never expires (`-1`).
        case persistent
        /// Expires in this many milliseconds.
        case milliseconds(Int64)
    }

    /// `GET key`: the value, or `nil` when the key is missing.
    public func get(_ key: String) async throws(RedisError) -> [UInt8]? {
        let reply = try await send(["GET", .bulk(key)])
        if reply.isNull { return nil }
        guard let bytes = reply.bytes else { throw .unexpectedReply(reply.description) }
        return bytes
    }

    /// `SET key value [NX|XX] [EX s|PX ms]`: whether it was written (`NX`/`XX` may refuse).
    @discardableResult
    public func set(_ key: String, _ value: [UInt8], condition: SetCondition = .always, expiry: Expiry? = nil)
        async throws(RedisError) -> Bool
    {
        var command: [RedisValue] = ["SET", .bulk(key), .bulkString(value)]
        switch condition {
        case .always: break
        case .ifNotExists: command.append("NX")
        case .ifExists: command.append("XX")
        }
        switch expiry {
        case nil: break
        case .seconds(let seconds): command += ["EX", .integer(seconds)]
        case .milliseconds(let milliseconds): command += ["PX", .integer(milliseconds)]
        }
        let reply = try await send(command)
        switch reply {
        case .simpleString("OK"): return true
        case .null: return false
        default: throw .unexpectedReply(reply.description)
        }
    }

    /// `DEL key…`: how many of the keys existed.
    @discardableResult
    public func del(_ keys: [String]) async throws(RedisError) -> Int64 {
        try await integer(["DEL"] + keys.map(RedisValue.bulk))
    }

    /// `PUBLISH channel message`: how many subscribers received it.
    @discardableResult
    public func publish(_ channel: String, _ message: [UInt8]) async throws(RedisError) -> Int64 {
        try await integer(["PUBLISH", .bulk(channel), .bulkString(message)])
    }

    /// `EXPIRE key seconds`: whether the key exists (and now expires).
    @discardableResult
    public func expire(_ key: String, seconds: Int64) async throws(RedisError) -> Bool {
        try await integer(["EXPIRE", .bulk(key), .integer(seconds)]) == 1
    }

    /// `PTTL key`.
    public func pttl(_ key: String) async throws(RedisError) -> TimeToLive {
        switch try await integer(["PTTL", .bulk(key)]) {
        case -2: .missing
        case -1: .persistent
        case let milliseconds: .milliseconds(milliseconds)
        }
    }

    /// `INCR key`: the value after the increment.
    public func incr(_ key: String) async throws(RedisError) -> Int64 {
        try await integer(["INCR", .bulk(key)])
    }

    /// `PING`: true once the server answered `PONG`.
    public func ping() async throws(RedisError) {
        let reply = try await send(["PING"])
        guard reply == .simpleString("PONG") else { throw .unexpectedReply(reply.description) }
    }

    private func integer(_ command: [RedisValue]) async throws(RedisError) -> Int64 {
        let reply = try await send(command)
        guard let value = reply.integer else { throw .unexpectedReply(reply.description) }
        return value
    }
}
