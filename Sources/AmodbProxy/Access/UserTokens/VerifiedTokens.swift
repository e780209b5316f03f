import AmodbCrypto
import Synchronization

/// The users' tokens that verified, remembered so that a user's next requests cost a
/// lookup, not a JSON parse and a signature check: an app sends the same ID token on every
/// call for its lifetime (an hour, for most providers).
///
/// A token is remembered under a 128-bit keyed digest of its bytes (`SipHash128`, under a
/// key drawn at random when the process starts), never under the token: the memory holds
/// no credential, and without the key no other byte string can be made to share a
/// remembered token's digest. With each token it keeps what must be checked again on every
/// use, against the clock of that use: the expiry, the earliest time it is valid (`nbf` or
/// `iat`), and the generation of the keys that verified it, which a change of the key set
/// ends (`KeySetRefresher`). A change of the HS256 secret is a restart, which remembers
/// nothing.
///
/// Bounded: at most `capacity` tokens, in 16 shards of two tables each, with nothing on the
/// heap per token: a user is kept as the 8 bytes their names are written from (two short
/// strings a request; kept as strings, a token took about three times the memory). New
/// tokens go into the recent table; when it holds half the shard's share, it becomes the
/// older table and the table older than that is dropped whole. A token found in the older
/// table moves back to the recent one, so the tokens in use stay and those of users gone
/// quiet (or refreshed away) fall out within two turns, with no sweep and no per-entry
/// bookkeeping.
final class VerifiedTokens: Sendable {
    /// What is known of a verified token.
    struct Remembered: Sendable {
        /// Who it speaks for (`UserIdentity.hash`): a number, not the user's names, so that
        /// an entry is 32 bytes with nothing on the heap.
        let user: UInt64
        /// `exp`, in seconds since 1970.
        let expires: Double
        /// The later of `nbf` and `iat` (`-infinity` without either): a remembered token is
        /// used only once the clock, with the leeway, has reached it.
        let validFrom: Double
        /// The generation of the keys that verified it.
        let generation: UInt64
    }

    private struct Tables {
        var recent: [SipHash128.Digest: Remembered] = [:]
        var older: [SipHash128.Digest: Remembered] = [:]
    }

    private final class Shard: Sendable {
        let tables = Mutex(Tables())
    }

    /// The most tokens remembered at once.
    let capacity: Int
    /// 98,304: each of the 32 tables then holds at most 3,072 tokens, which fit 4,096 slots
    /// of 48 bytes (a dictionary is at most three quarters full): 6 MiB at most in all.
    static let defaultCapacity = 3_072 * 2 * 16
    private static let shardCount = 16
    private let shards = (0..<VerifiedTokens.shardCount).map { _ in Shard() }
    private let hash = SipHash128()

    /// A memory of at most `capacity` tokens.
    init(capacity: Int = VerifiedTokens.defaultCapacity) {
        self.capacity = max(Self.shardCount * 2, capacity)
    }

    /// The digest a token is remembered under.
    func digest(of token: Span<UInt8>) -> SipHash128.Digest {
        hash.digest(token)
    }

    /// What is remembered under `digest`, if anything.
    func remembered(_ digest: SipHash128.Digest) -> Remembered? {
        shard(digest).tables.withLock { tables in
            if let found = tables.recent[digest] { return found }
            guard let found = tables.older[digest] else { return nil }
            insert(found, at: digest, into: &tables)
            return found
        }
    }

    /// Remembers a token that verified.
    func remember(_ token: Remembered, at digest: SipHash128.Digest) {
        shard(digest).tables.withLock { tables in insert(token, at: digest, into: &tables) }
    }

    /// Forgets the token under `digest` (expired, or verified under keys no longer held).
    func forget(_ digest: SipHash128.Digest) {
        shard(digest).tables.withLock { tables in
            tables.recent[digest] = nil
            tables.older[digest] = nil
        }
    }

    /// Tokens remembered now, counted in both tables (a token in both, once in each).
    var count: Int {
        shards.reduce(0) { count, shard in count + shard.tables.withLock { $0.recent.count + $0.older.count } }
    }

    private func insert(_ token: Remembered, at digest: SipHash128.Digest, into tables: inout Tables) {
        if tables.recent.count >= capacity / Self.shardCount / 2 {
            tables.older = tables.recent
            tables.recent = [:]
        }
        tables.recent[digest] = token
    }

    /// The digest's own bits pick the shard: they are uniform, and no one can aim them.
    private func shard(_ digest: SipHash128.Digest) -> Shard {
        shards[Int(digest.high % UInt64(Self.shardCount))]
    }
}
