/// The path of a request as the access log shows it when no route template names it:
/// the target as received, without its query (a query can hold someone's `api_key`),
/// bytes outside printable ASCII percent-encoded (nothing a client sends can break a
/// log line), and at most 256 bytes.
enum LoggedPath {
    /// Longest path logged, in bytes.
    static let maxBytes = 256

    /// The path of a target as received (`/3/movie/popular?api_key=…` → `/3/movie/popular`).
    static func of(target: String) -> String {
        escaped(target.utf8)
    }

    /// The path in the raw bytes of a request head the server refused, if its request
    /// line got as far as a target: `GARBAGE /x?y HTTP/1.1` → `/x`. Leading empty
    /// lines are skipped, as the parser skips them (RFC 9112 §2.2).
    static func of(requestHead bytes: ArraySlice<UInt8>) -> String? {
        var start = bytes.startIndex
        while start < bytes.endIndex, bytes[start] == UInt8(ascii: "\r") || bytes[start] == UInt8(ascii: "\n") {
            start = bytes.index(after: start)
        }
        let line = bytes[start...].prefix { $0 != UInt8(ascii: "\r") && $0 != UInt8(ascii: "\n") }
        guard let space = line.firstIndex(of: UInt8(ascii: " ")) else { return nil }
        let target = line[line.index(after: space)...].prefix { $0 != UInt8(ascii: " ") }
        return target.isEmpty ? nil : escaped(target)
    }

    /// Up to the query, percent-encoding what is not printable ASCII (and `%` stays as
    /// sent: the client's own encoding is shown as it came), cut at `maxBytes`.
    private static func escaped(_ bytes: some Collection<UInt8>) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(min(bytes.count, maxBytes))
        for byte in bytes {
            if byte == UInt8(ascii: "?") { break }
            if byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") {
                guard out.count + 1 <= maxBytes else { break }
                out.append(byte)
            } else {
                guard out.count + 3 <= maxBytes else { break }
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
