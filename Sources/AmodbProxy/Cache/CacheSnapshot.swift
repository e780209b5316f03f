import AmodbModels
import Foundation

/// The cache on disk, so a redeploy spends no budget: written atomically (a temporary
/// file, then `rename(2)`), read back with the entries' true ages. A file that is not
/// ours, damaged, or holds an answer that fails validation is refused, never a crash.
struct CacheSnapshot {
    /// What identifies our files.
    static let format = "amodb-proxy-cache-snapshot"
    static let version = 1

    private struct File: Codable {
        var format: String
        var version: Int
        var writtenAt: Double
        var entries: [Entry]
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

    /// Writes every entry; returns how many.
    @discardableResult
    func write(_ entries: [(key: String, entry: CachedResponse)], now: Double) throws -> Int {
        let file = File(format: Self.format, version: Self.version, writtenAt: now, entries: entries.map {
            Entry(key: $0.key, status: $0.entry.status, storedAt: $0.entry.storedAt, lifetime: $0.entry.lifetime, body: Data($0.entry.body))
        })
        let data = try JSONEncoder().encode(file)
        let temporary = path + ".tmp-\(getpid())"
        guard FileManager.default.createFile(atPath: temporary, contents: data, attributes: [.posixPermissions: 0o600]) else {
            throw LoadError.unreadable("cannot create \(temporary)")
        }
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw LoadError.unreadable(String(cString: strerror(code)))
        }
        return file.entries.count
    }

    /// The entries still worth having: younger than `maxStale`, under a canonical key of a
    /// forwarded route, and (for 200s) passing `validator`. Returns nothing if the file is absent.
    func load(now: Double, maxStale: Double, validator: AnswerValidator) throws(LoadError) -> [(key: String, entry: CachedResponse)] {
        guard FileManager.default.fileExists(atPath: path) else { return [] }
        guard let data = FileManager.default.contents(atPath: path) else { throw .unreadable("permission denied") }
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: data)
        } catch {
            throw (try? JSONDecoder().decode(Header.self, from: data)).map { $0.format == Self.format ? LoadError.damaged : .foreign } ?? .damaged
        }
        guard file.format == Self.format, file.version == Self.version else { throw .foreign }
        return file.entries.compactMap { entry in
            guard now - entry.storedAt < maxStale, entry.status == 200 || entry.status == 404,
                  let route = Self.route(ofKey: entry.key)
            else { return nil }
            let body = [UInt8](entry.body)
            if entry.status == 200, validator.problem(with: body, for: route) != nil { return nil }
            return (entry.key, CachedResponse(status: entry.status, body: body, storedAt: entry.storedAt, lifetime: entry.lifetime))
        }
    }

    private struct Header: Codable {
        var format: String
    }

    /// The route a cache key belongs to, if the key is one the proxy would make.
    static func route(ofKey key: String) -> Route? {
        let path = key.split(separator: "?", maxSplits: 1).first.map(String.init) ?? key
        return Route(path: path)
    }
}
