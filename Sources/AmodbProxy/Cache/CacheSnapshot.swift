import AmodbModels
import Foundation

/// The cache on disk, so a redeploy spends no budget: written atomically (a temporary
/// file, then `rename(2)`), read back with the entries' true ages. A file that is not
/// ours or is damaged is refused; an entry that is out of bounds or fails validation
/// is dropped; never a crash (the file is read at every start: a crash would loop).
struct CacheSnapshot {
    /// What identifies our files.
    static let format = "amodb-proxy-cache-snapshot"
    static let version = 1

    /// A file as read back: each entry on its own, so one that cannot be read (a number
    /// out of `Double`'s range, a missing field) is dropped without losing the rest.
    private struct ReadFile: Decodable {
        var format: String
        var version: Int
        var entries: [ReadEntry]
    }

    private enum ReadEntry: Decodable {
        case entry(Entry)
        case unreadable

        init(from decoder: any Decoder) throws {
            do {
                self = .entry(try Entry(from: decoder))
            } catch {
                self = .unreadable
            }
        }
    }

    private struct Entry: Codable {
        var key: String
        var status: Int
        var storedAt: Double
        var lifetime: Double
        var body: Data
    }

    /// Why a snapshot was not loaded.
    enum LoadError: Error, CustomStringConvertible {
        case unreadable(String)
        case foreign
        case damaged

        var description: String {
            switch self {
            case .unreadable(let reason): "cannot read it (\(reason))"
            case .foreign: "it is not an amodb-proxy cache snapshot of this version"
            case .damaged: "it is damaged"
            }
        }
    }

    let path: String

    /// Writes every entry; returns how many. Streamed: each entry is encoded and written
    /// on its own, so writing costs memory for one entry and a buffer, not a second copy of
    /// the cache (a whole file encoded at once doubled the peak). Synced, then renamed over
    /// the previous file: a reader finds the old file or the new one, never a part.
    @discardableResult
    func write(_ entries: some Sequence<(key: String, entry: CachedResponse)>, now: Double) throws -> Int {
        let temporary = path + ".tmp-\(getpid())"
        guard FileManager.default.createFile(atPath: temporary, contents: nil, attributes: [.posixPermissions: 0o600]),
            let handle = FileHandle(forWritingAtPath: temporary)
        else {
            throw LoadError.unreadable("cannot create \(temporary)")
        }
        var written = 0
        do {
            defer { try? handle.close() }
            let encoder = JSONEncoder()
            // The header's fields, then the entries one by one: `{"format":…,"writtenAt":…,"entries":[e1,e2]}`.
            var header = try encoder.encode(Header(format: Self.format, version: Self.version, writtenAt: now))
            header.removeLast()  // its closing brace
            var buffer = header + Data(#","entries":["#.utf8)
            for item in entries {
                if written > 0 { buffer.append(UInt8(ascii: ",")) }
                written += 1
                buffer += try encoder.encode(
                    Entry(
                        key: item.key, status: item.entry.status, storedAt: item.entry.storedAt,
                        lifetime: item.entry.lifetime, body: Data(item.entry.body)))
                if buffer.count >= Self.writeBufferBytes {
                    try handle.write(contentsOf: buffer)
                    buffer.removeAll(keepingCapacity: true)
                }
            }
            buffer += Data("]}".utf8)
            try handle.write(contentsOf: buffer)
            try handle.synchronize()
        } catch {
            unlink(temporary)
            throw LoadError.unreadable("cannot write \(temporary): \(error)")
        }
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw LoadError.unreadable(String(cString: strerror(code)))
        }
        return written
    }

    /// Bytes gathered before each write of the file.
    private static let writeBufferBytes = 256 * 1024

    /// What a loaded entry must respect: what the current settings could have written.
    struct Bounds: Sendable {
        /// The longest lifetime of a stored 200 and the oldest it may be, per route
        /// (`AMODB_CACHE_TTL`, `AMODB_MOVIE_TTL`, `AMODB_CONFIGURATION_TTL`, `AMODB_MAX_STALE`).
        var freshness: Freshness
        /// The longest lifetime of a remembered 404, in seconds (`AMODB_NEGATIVE_TTL`).
        var negativeTTL: Double
        /// How far in the future an entry may have been stored, in seconds: clocks of
        /// two hosts (or one before and after an NTP step) disagree a little.
        var clockSkew: Double = 60

        /// The bounds `configuration` sets.
        init(_ configuration: ProxyConfiguration) {
            freshness = Freshness(configuration)
            negativeTTL = configuration.negativeTTL
        }
    }

    /// What a load kept, and what it dropped and why.
    struct Loaded {
        /// The entries to store, by cache key.
        var entries: [(key: String, entry: CachedResponse)] = []
        /// The entries refused, by cache key (empty when the entry could not be read), and why.
        var dropped: [(key: String, problem: String)] = []
    }

    /// Reads the file; returns nothing if it is absent. No entry is trusted: each is kept
    /// only under a canonical key of a forwarded route, with a status the proxy stores
    /// (200, or 404), finite times within `bounds`, and a body that passes `validator`
    /// for that very key, as a fresh answer must (so `/movie/5` cannot serve movie 550).
    func load(now: Double, bounds: Bounds, validator: AnswerValidator) throws(LoadError) -> Loaded {
        guard FileManager.default.fileExists(atPath: path) else { return Loaded() }
        guard let data = FileManager.default.contents(atPath: path) else { throw .unreadable("permission denied") }
        let file: ReadFile
        do {
            file = try JSONDecoder().decode(ReadFile.self, from: data)
        } catch {
            throw (try? JSONDecoder().decode(Header.self, from: data)).map {
                $0.format == Self.format ? LoadError.damaged : .foreign
            } ?? .damaged
        }
        guard file.format == Self.format, file.version == Self.version else { throw .foreign }
        var loaded = Loaded()
        for case .unreadable in file.entries {
            loaded.dropped.append(("", "unreadable"))
        }
        for case .entry(let entry) in file.entries {
            if let problem = Self.problem(with: entry, now: now, bounds: bounds, validator: validator) {
                loaded.dropped.append((entry.key, problem))
            } else {
                loaded.entries.append(
                    (
                        entry.key,
                        CachedResponse(
                            status: entry.status, body: [UInt8](entry.body), storedAt: entry.storedAt,
                            lifetime: entry.lifetime)
                    ))
            }
        }
        return loaded
    }

    /// Why `entry` must not be loaded, or `nil`. Checked before any arithmetic that could
    /// trap: a lifetime of `1e300` or an age of `-inf` never reaches an `Int`.
    private static func problem(with entry: Entry, now: Double, bounds: Bounds, validator: AnswerValidator) -> String? {
        problem(
            key: entry.key,
            with: CachedResponse(
                status: entry.status, body: [UInt8](entry.body), storedAt: entry.storedAt, lifetime: entry.lifetime),
            now: now, bounds: bounds, validator: validator)
    }

    /// Why `entry`, read from outside the process (a snapshot, or the Redis replicas share),
    /// must not be kept under `key`, or `nil`: the same checks for every such source.
    static func problem(
        key: String, with entry: CachedResponse, now: Double, bounds: Bounds, validator: AnswerValidator
    ) -> String? {
        guard let request = CacheKey.request(of: key) else { return "not a cache key the proxy makes" }
        let longest: Double
        switch entry.status {
        case 200: longest = bounds.freshness.lifetime(of: request.route)
        case 404: longest = bounds.negativeTTL
        default: return "status \(entry.status) is never stored"
        }
        guard entry.lifetime.isFinite, entry.lifetime > 0 else { return "lifetime is not a positive number" }
        guard entry.lifetime <= longest else {
            return "lifetime longer than "
                + (entry.status == 200 ? Freshness.setting(of: request.route) : "AMODB_NEGATIVE_TTL")
        }
        let age = now - entry.storedAt
        guard entry.storedAt.isFinite, age.isFinite, age >= -bounds.clockSkew else {
            return "stored at an impossible time"
        }
        // A stale 404 is never served, a stale 200 only up to max-stale.
        guard age < (entry.status == 200 ? bounds.freshness.oldestStale(of: request.route) : entry.lifetime) else {
            return "too old"
        }
        let body = entry.body
        return entry.status == 200
            ? validator.problem(with: body, for: request.route) : validator.problem(withNotFound: body)
    }

    /// The fields before the entries; reading a file that is not ours, only `format` is looked for.
    private struct Header: Codable {
        var format: String
        var version: Int?
        var writtenAt: Double?
    }
}
