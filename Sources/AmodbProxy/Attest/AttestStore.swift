import AmodbCrypto
import AmodbRedis
import Foundation
import Synchronization

/// Where App Attest's state lives: the one-time challenges handed out, and each attested key
/// with its counter. With a fleet it is Redis, so that any replica checks a challenge
/// another handed out, every replica knows every key, and a counter advanced on one
/// replica refuses the same assertion on all (`RedisAttestStore`); alone, memory
/// (`MemoryAttestStore`), bounded.
protocol AttestStore: Sendable {
    /// Keeps `challenge` for `lifetime` seconds; false when it cannot (Redis unreachable).
    func issue(challenge: String, lifetime: Double, now: Double) async -> Bool
    /// Takes `challenge` if it was handed out and is still good: it can be taken once.
    func consume(challenge: String, now: Double) async -> StoreAnswer<Bool>
    /// Keeps an attested key (counter 0).
    func save(_ key: StoredAttestKey) async -> Bool
    /// The key with `keyID`, if it was attested here.
    func key(_ keyID: [UInt8]) async -> StoreAnswer<StoredAttestKey?>
    /// Sets the key's counter to `counter` if that is greater than the one kept, in one
    /// step: false when it is not (a replayed or older assertion) or the key is unknown.
    func advance(_ keyID: [UInt8], to counter: UInt32) async -> StoreAnswer<Bool>
}

/// An answer from the store, or that it could not be asked.
enum StoreAnswer<Value: Sendable>: Sendable {
    case answer(Value)
    case unavailable
}

/// An attested key as kept.
struct StoredAttestKey: Sendable, Equatable {
    var keyID: [UInt8]
    /// The 65-byte uncompressed P-256 point.
    var publicKey: [UInt8]
    var counter: UInt32
    /// `TEAMID.bundle.id`.
    var app: String
    var development: Bool
}

/// The store of a lone replica: memory, bounded (the oldest challenges and keys go first).
final class MemoryAttestStore: AttestStore {
    private struct State {
        var challenges: [String: Double] = [:]
        var keys: [[UInt8]: StoredAttestKey] = [:]
        var keyOrder: [[UInt8]] = []
    }

    private let state = Mutex(State())
    /// Challenges held at most: a flood of asks (each already limited per address) cannot grow it further.
    static let challengeCapacity = 50_000
    /// Keys held at most (one per install of the app): beyond it the oldest is forgotten,
    /// and its app attests a new one when told the key is unknown.
    static let keyCapacity = 200_000

    func issue(challenge: String, lifetime: Double, now: Double) -> Bool {
        state.withLock { state in
            if state.challenges.count >= Self.challengeCapacity {
                state.challenges = state.challenges.filter { $0.value > now }
                if state.challenges.count >= Self.challengeCapacity { return false }
            }
            state.challenges[challenge] = now + lifetime
            return true
        }
    }

    func consume(challenge: String, now: Double) -> StoreAnswer<Bool> {
        .answer(state.withLock { state in (state.challenges.removeValue(forKey: challenge) ?? 0) > now })
    }

    func save(_ key: StoredAttestKey) -> Bool {
        state.withLock { state in
            if state.keys[key.keyID] == nil {
                state.keyOrder.append(key.keyID)
                if state.keyOrder.count > Self.keyCapacity {
                    state.keys[state.keyOrder.removeFirst()] = nil
                }
            }
            state.keys[key.keyID] = key
            return true
        }
    }

    func key(_ keyID: [UInt8]) -> StoreAnswer<StoredAttestKey?> {
        .answer(state.withLock { $0.keys[keyID] })
    }

    func advance(_ keyID: [UInt8], to counter: UInt32) -> StoreAnswer<Bool> {
        .answer(
            state.withLock { state in
                guard let kept = state.keys[keyID], counter > kept.counter else { return false }
                state.keys[keyID]?.counter = counter
                return true
            })
    }
}

/// The fleet's store, in Redis under the prefix: `attest:challenge:<hash>` (a key that
/// expires with the challenge, deleted when taken: `DEL` says whether it was there, so
/// only one replica takes it) and `attest:key:<key id, hex>` (a hash: `public_key`,
/// `counter`, `app`, `development`; kept 180 days after its last session), whose counter is
/// advanced by a script that compares and sets in one step.
struct RedisAttestStore: AttestStore {
    let link: RedisLink

    /// How long a key is kept after it was last used: an app that has not asked for a
    /// session in that long attests a new key.
    static let keyLifetimeMilliseconds: Int64 = 180 * 86_400 * 1000

    private func challengeKey(_ challenge: String) -> String {
        link.prefix + "attest:challenge:" + Self.hex(SHA256.hash(Array(challenge.utf8)))
    }

    private func keyKey(_ keyID: [UInt8]) -> String {
        link.prefix + "attest:key:" + Self.hex(keyID)
    }

    func issue(challenge: String, lifetime: Double, now: Double) async -> Bool {
        let milliseconds = Int64(lifetime * 1000)
        return await link.call { client in
            try await client.send(["SET", .bulk(challengeKey(challenge)), "1", "NX", "PX", .integer(milliseconds)])
        } != nil
    }

    func consume(challenge: String, now: Double) async -> StoreAnswer<Bool> {
        guard let reply = await link.call({ client in try await client.send(["DEL", .bulk(challengeKey(challenge))]) })
        else { return .unavailable }
        return .answer(reply.integer == 1)
    }

    func save(_ key: StoredAttestKey) async -> Bool {
        let name = keyKey(key.keyID)
        return await link.call { client in
            _ = try await client.send([
                "HSET", .bulk(name), "public_key", .bulk(Base64URL.encode(key.publicKey)), "counter",
                .integer(Int64(key.counter)), "app", .bulk(key.app), "development", .integer(key.development ? 1 : 0),
            ])
            return try await client.send(["PEXPIRE", .bulk(name), .integer(Self.keyLifetimeMilliseconds)])
        } != nil
    }

    func key(_ keyID: [UInt8]) async -> StoreAnswer<StoredAttestKey?> {
        guard
            let reply = await link.call({ client in
                try await client.send(["HMGET", .bulk(keyKey(keyID)), "public_key", "counter", "app", "development"])
            })
        else { return .unavailable }
        guard case .array(let fields) = reply, fields.count == 4, let encoded = fields[0].string,
            let publicKey = Base64URL.decode(encoded), let counterText = fields[1].string,
            let counter = UInt32(counterText), let app = fields[2].string
        else { return .answer(nil) }
        return .answer(
            StoredAttestKey(
                keyID: keyID, publicKey: publicKey, counter: counter, app: app, development: fields[3].string == "1"))
    }

    func advance(_ keyID: [UInt8], to counter: UInt32) async -> StoreAnswer<Bool> {
        guard
            let reply = await link.call({ client in
                try await client.run(
                    Self.advanceScript, keys: [keyKey(keyID)],
                    arguments: [.integer(Int64(counter)), .integer(Self.keyLifetimeMilliseconds)])
            })
        else { return .unavailable }
        return .answer(reply.integer == 1)
    }

    /// Sets the counter when the new one is greater: 1; 0 when it is not; -1 for no key.
    static let advanceScript = RedisScript(
        """
        local kept = tonumber(redis.call('HGET', KEYS[1], 'counter'))
        if not kept then return -1 end
        if tonumber(ARGV[1]) <= kept then return 0 end
        redis.call('HSET', KEYS[1], 'counter', ARGV[1])
        redis.call('PEXPIRE', KEYS[1], ARGV[2])
        return 1
        """)

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
