import AmodbHTTP
import AmodbModels
import AmodbProxy
import Foundation

/// Reads the proxy's access log back into the requests a replay takes (`PolicyReplay`):
/// for each line of a forwarded request that reached the cache, when it arrived and the
/// cache key it asked for.
///
/// A pure parser over bytes: `feed` takes a chunk of any size (lines may straddle chunks),
/// `finish` reads what is left and sorts. A log of a million lines is a few hundred MB, so
/// it is read in chunks and each line is scanned in place: only the fields a replay needs
/// are looked at (`time`, `route`, `key`, `cache`, `duration_ms`), no JSON object is built,
/// and each distinct key is parsed into an `AmodbRequest` once.
///
/// Lines in both formats the proxy writes are read: JSON objects and `text` lines
/// (`time name=value …`, a value with a space, `"` or `=` written as a JSON string).
/// What cannot be replayed is counted, not guessed at:
/// - a forwarded route's line without `key` was written before keys were logged: it
///   names a route, not a path;
/// - `/healthz`, `/readyz`, `/metrics`, unmatched and invalid paths, and forwarded
///   requests refused before the cache (`cache` `none`: a client token, a client's rate,
///   a bad parameter, a method) never asked amodb for anything;
/// - a line that is no access-log line (event-log lines interleaved, another program's
///   output, a line cut short, a key that is not one the proxy makes) is unreadable.
public struct AccessLogReader: Sendable {
    /// What a log held.
    public struct Contents: Sendable {
        /// The requests to replay, by arrival time; lines of one millisecond keep their order.
        public var requests: [ReplayRequest]
        /// Lines of forwarded routes written before keys were logged (the previous version).
        public var linesBeforeKeys: Int
        /// Lines of answers that asked amodb for nothing: health checks, metrics, other
        /// paths, requests refused before the cache.
        public var linesNotForwarded: Int
        /// Lines that are no access-log line of this proxy.
        public var linesUnreadable: Int
        /// Replayable lines that arrived before a line above them (sorted back into place).
        public var linesOutOfOrder: Int
    }

    /// Why a log could not be read.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// What went wrong, naming the file.
        public let description: String
    }

    /// Longest line read; a longer one is unreadable (the proxy's lines are well under
    /// 4 KB: the only free text in them, a path, is cut at 256 bytes), and a file with no
    /// newline cannot grow the buffer without bound.
    public static let maxLineBytes = 64 * 1024

    /// Bytes read from a file at a time.
    static let chunkBytes = 1 << 20

    /// One replayable line: arrival time, its index in the file's order (for a stable
    /// sort) and its key's index in `requests`.
    private struct Arrival {
        var time: Double
        var line: Int32
        var key: Int32
    }

    private var arrivals: [Arrival] = []
    /// The tail of the last chunk, a line not yet ended.
    private var pending: [UInt8] = []
    /// Whether the line being read has grown past `maxLineBytes` (its bytes are dropped).
    private var overlong = false
    private var keys = KeyTable()
    private var linesBeforeKeys = 0
    private var linesNotForwarded = 0
    private var linesUnreadable = 0
    private var lastTime = -Double.infinity
    private var linesOutOfOrder = 0
    /// The calendar second of the last time read, and where it starts in seconds since 1970:
    /// the lines of one second share it.
    private var lastSecondText: (UInt64, UInt64, UInt64) = (0, 0, 0)
    private var lastSecond = 0

    /// A reader before its first chunk.
    public init() {}

    /// Reads the log at `path` (`-`: standard input) in chunks.
    public static func read(path: String) throws(Failure) -> Contents {
        let handle: FileHandle
        if path == "-" {
            handle = FileHandle.standardInput
        } else {
            guard let file = FileHandle(forReadingAtPath: path) else {
                throw Failure(description: "cannot open the access log \(ConfigurationLoader.shown(path))")
            }
            handle = file
        }
        defer { if path != "-" { try? handle.close() } }
        var reader = AccessLogReader()
        while true {
            let chunk: Data?
            do {
                chunk = try handle.read(upToCount: chunkBytes)
            } catch {
                throw Failure(
                    description:
                        "cannot read the access log \(ConfigurationLoader.shown(path)): \(error.localizedDescription)")
            }
            guard let chunk, !chunk.isEmpty else { break }
            chunk.withUnsafeBytes { reader.feed($0) }
        }
        return reader.finish()
    }

    /// Reads the lines a chunk ends, and keeps its unended tail for the next.
    public mutating func feed(_ chunk: UnsafeRawBufferPointer) {
        guard let base = chunk.baseAddress?.assumingMemoryBound(to: UInt8.self), !chunk.isEmpty else { return }
        let end = base + chunk.count
        var start = base
        while start < end {
            guard let found = memchr(start, Int32(UInt8(ascii: "\n")), end - start) else {
                keep(UnsafeBufferPointer(start: start, count: end - start))
                return
            }
            let newline = UnsafePointer(found.assumingMemoryBound(to: UInt8.self))
            let piece = UnsafeBufferPointer(start: start, count: newline - start)
            if pending.isEmpty && !overlong {
                read(line: piece)
            } else {
                keep(piece)
                if overlong {
                    linesUnreadable += 1
                } else {
                    let line = pending
                    line.withUnsafeBufferPointer { read(line: $0) }
                }
                pending.removeAll(keepingCapacity: true)
                overlong = false
            }
            start = newline + 1
        }
    }

    /// Reads the last line (if the log does not end with a newline) and returns what the log held.
    public mutating func finish() -> Contents {
        if overlong {
            linesUnreadable += 1
        } else if !pending.isEmpty {
            let last = pending
            last.withUnsafeBufferPointer { read(line: $0) }
        }
        pending = []
        overlong = false
        if linesOutOfOrder > 0 {
            // Stable: the line index breaks ties, as the file's order had them.
            arrivals.sort { $0.time < $1.time || ($0.time == $1.time && $0.line < $1.line) }
        }
        let requests = keys.requests
        return Contents(
            requests: arrivals.map { ReplayRequest(time: $0.time, request: requests[Int($0.key)]) },
            linesBeforeKeys: linesBeforeKeys, linesNotForwarded: linesNotForwarded, linesUnreadable: linesUnreadable,
            linesOutOfOrder: linesOutOfOrder)
    }

    /// Adds bytes to the line not yet ended, unless it has grown too long.
    private mutating func keep(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard !overlong else { return }
        if pending.count + bytes.count > Self.maxLineBytes {
            overlong = true
            pending.removeAll(keepingCapacity: true)
        } else {
            pending.append(contentsOf: bytes)
        }
    }

    /// What one line's fields say; each is `nil` when the line does not have it.
    private struct Fields {
        var time: UnsafeBufferPointer<UInt8>?
        var route: UnsafeBufferPointer<UInt8>?
        var key: UnsafeBufferPointer<UInt8>?
        var cache: UnsafeBufferPointer<UInt8>?
        var duration: UnsafeBufferPointer<UInt8>?

        /// Keeps `value` if `name` is a field the reader needs.
        @inline(__always)
        mutating func take(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
            switch name.count {
            case 3 where AccessLogReader.equals(name, "key"): key = value
            case 4 where AccessLogReader.equals(name, "time"): time = value
            case 5 where AccessLogReader.equals(name, "route"): route = value
            case 5 where AccessLogReader.equals(name, "cache"): cache = value
            case 11 where AccessLogReader.equals(name, "duration_ms"): duration = value
            default: break
            }
        }
    }

    private mutating func read(line raw: UnsafeBufferPointer<UInt8>) {
        let line = Self.trimmed(raw)
        guard !line.isEmpty else { return }
        let parsed = line[0] == UInt8(ascii: "{") ? Self.jsonFields(line) : Self.textFields(line)
        guard let fields = parsed, let timeText = fields.time, let route = fields.route, let cache = fields.cache else {
            linesUnreadable += 1
            return
        }
        guard var time = readTime(timeText) else {
            linesUnreadable += 1
            return
        }
        // Forwarded routes' templates are under the API root; every other label is not.
        guard Self.starts(route, with: "/3/"), !Self.equals(cache, "none") else {
            linesNotForwarded += 1
            return
        }
        guard let key = fields.key else {
            linesBeforeKeys += 1
            return
        }
        guard let index = keys.index(of: key) else {
            linesUnreadable += 1
            return
        }
        // A line is written when its answer is: the request came `duration_ms` before. A
        // duration that is no number, or no request's, makes the line unreadable.
        if let duration = fields.duration {
            guard let milliseconds = Self.decimal(duration) else {
                linesUnreadable += 1
                return
            }
            time -= milliseconds / 1000
        }
        if time < lastTime { linesOutOfOrder += 1 } else { lastTime = time }
        arrivals.append(Arrival(time: time, line: Int32(truncatingIfNeeded: arrivals.count), key: index))
    }

    // MARK: Fields

    /// The fields of a JSON object line, or `nil` if it is not one flat object of strings
    /// and scalars. A string with an escape is returned with its escapes (none of the
    /// fields read here has one when the proxy wrote it).
    private static func jsonFields(_ line: UnsafeBufferPointer<UInt8>) -> Fields? {
        var fields = Fields()
        var at = 1
        let count = line.count
        func skipSpaces() {
            while at < count, line[at] == UInt8(ascii: " ") || line[at] == UInt8(ascii: "\t") { at += 1 }
        }
        /// The string starting at `at` (a quote), escapes kept; `at` moves past its closing quote.
        func string() -> UnsafeBufferPointer<UInt8>? {
            guard at < count, line[at] == UInt8(ascii: "\"") else { return nil }
            let start = at + 1
            at = start
            while at < count {
                let byte = line[at]
                if byte == UInt8(ascii: "\"") {
                    at += 1
                    return UnsafeBufferPointer(rebasing: line[start..<(at - 1)])
                }
                at += byte == UInt8(ascii: "\\") ? 2 : 1
            }
            return nil
        }
        skipSpaces()
        if at < count, line[at] == UInt8(ascii: "}") { return fields }
        while true {
            skipSpaces()
            guard let name = string() else { return nil }
            skipSpaces()
            guard at < count, line[at] == UInt8(ascii: ":") else { return nil }
            at += 1
            skipSpaces()
            guard at < count else { return nil }
            let value: UnsafeBufferPointer<UInt8>
            if line[at] == UInt8(ascii: "\"") {
                guard let text = string() else { return nil }
                value = text
            } else {
                // A number, `true`, `false` or `null`: up to the next separator.
                let start = at
                while at < count, line[at] != UInt8(ascii: ","), line[at] != UInt8(ascii: "}"),
                    line[at] != UInt8(ascii: " ")
                { at += 1 }
                guard at > start, line[start] != UInt8(ascii: "{"), line[start] != UInt8(ascii: "[") else { return nil }
                value = UnsafeBufferPointer(rebasing: line[start..<at])
            }
            fields.take(name: name, value: value)
            skipSpaces()
            guard at < count else { return nil }
            if line[at] == UInt8(ascii: ",") {
                at += 1
                continue
            }
            guard line[at] == UInt8(ascii: "}") else { return nil }
            at += 1
            skipSpaces()
            return at == count ? fields : nil
        }
    }

    /// The fields of a text line (`time name=value …`), or `nil` if it is not one: a word
    /// without `=` after the time is an event line's level or message.
    private static func textFields(_ line: UnsafeBufferPointer<UInt8>) -> Fields? {
        var fields = Fields()
        let count = line.count
        var at = 0
        while at < count, line[at] != UInt8(ascii: " ") { at += 1 }
        fields.time = UnsafeBufferPointer(rebasing: line[0..<at])
        while at < count {
            while at < count, line[at] == UInt8(ascii: " ") { at += 1 }
            guard at < count else { break }
            let nameStart = at
            while at < count, line[at] != UInt8(ascii: "="), line[at] != UInt8(ascii: " ") { at += 1 }
            guard at < count, line[at] == UInt8(ascii: "="), at > nameStart else { return nil }
            let name = UnsafeBufferPointer(rebasing: line[nameStart..<at])
            at += 1
            let value: UnsafeBufferPointer<UInt8>
            if at < count, line[at] == UInt8(ascii: "\"") {
                // A JSON string, escapes kept.
                let start = at + 1
                at = start
                var closed = false
                while at < count {
                    if line[at] == UInt8(ascii: "\"") {
                        closed = true
                        break
                    }
                    at += line[at] == UInt8(ascii: "\\") ? 2 : 1
                }
                guard closed else { return nil }
                value = UnsafeBufferPointer(rebasing: line[start..<at])
                at += 1
            } else {
                let start = at
                while at < count, line[at] != UInt8(ascii: " ") { at += 1 }
                value = UnsafeBufferPointer(rebasing: line[start..<at])
            }
            fields.take(name: name, value: value)
        }
        return fields
    }

    // MARK: Values

    /// `2026-11-29T20:39:05.123Z` (RFC 3339: any number of fraction digits, or none; `Z` or
    /// a `±hh:mm` offset) as seconds since 1970.
    private mutating func readTime(_ text: UnsafeBufferPointer<UInt8>) -> Double? {
        guard text.count >= 20, let base = text.baseAddress else { return nil }
        // The lines of one second share their first 19 bytes, read as three words.
        let words = UnsafeRawPointer(base)
        let second = (
            words.loadUnaligned(as: UInt64.self), words.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
            UInt64(words.loadUnaligned(fromByteOffset: 16, as: UInt16.self)) | UInt64(text[18]) << 16
        )
        var seconds: Int
        if second == lastSecondText {
            seconds = lastSecond
        } else {
            guard let parsed = Self.calendarSecond(text) else { return nil }
            seconds = parsed
            lastSecondText = second
            lastSecond = parsed
        }
        var at = 19
        var fraction = 0.0
        if text[at] == UInt8(ascii: ".") {
            at += 1
            var scale = 0.1
            let start = at
            while at < text.count, let digit = Self.digit(text[at]) {
                fraction += Double(digit) * scale
                scale /= 10
                at += 1
            }
            guard at > start else { return nil }
        }
        guard at < text.count else { return nil }
        switch text[at] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            guard at + 1 == text.count else { return nil }
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard at + 6 == text.count, text[at + 3] == UInt8(ascii: ":"), let hours = Self.number(text, at + 1, 2),
                let minutes = Self.number(text, at + 4, 2),
                hours < 24, minutes < 60
            else { return nil }
            let offset = hours * 3600 + minutes * 60
            seconds += text[at] == UInt8(ascii: "+") ? -offset : offset
        default:
            return nil
        }
        return Double(seconds) + fraction
    }

    /// `2026-11-29T20:39:05` as seconds since 1970, checked field by field.
    private static func calendarSecond(_ text: UnsafeBufferPointer<UInt8>) -> Int? {
        guard text[4] == UInt8(ascii: "-"), text[7] == UInt8(ascii: "-"),
            text[10] == UInt8(ascii: "T") || text[10] == UInt8(ascii: "t"),
            text[13] == UInt8(ascii: ":"), text[16] == UInt8(ascii: ":"),
            let year = number(text, 0, 4), let month = number(text, 5, 2), let day = number(text, 8, 2),
            let hour = number(text, 11, 2), let minute = number(text, 14, 2), let second = number(text, 17, 2),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        return CivilTime.epochSeconds(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    }

    /// The decimal number of `width` digits at `start`.
    private static func number(_ text: UnsafeBufferPointer<UInt8>, _ start: Int, _ width: Int) -> Int? {
        var value = 0
        for index in start..<(start + width) {
            guard let digit = digit(text[index]) else { return nil }
            value = value * 10 + digit
        }
        return value
    }

    @inline(__always)
    private static func digit(_ byte: UInt8) -> Int? {
        let digit = byte &- UInt8(ascii: "0")
        return digit <= 9 ? Int(digit) : nil
    }

    /// `0.084`, `41`, `2000`: what `duration_ms` holds; `nil` for anything else, and for a
    /// duration longer than a day, which no request the proxy answered took (its deadlines
    /// are seconds): such a number would move the line's time anywhere.
    private static func decimal(_ text: UnsafeBufferPointer<UInt8>) -> Double? {
        guard text.count <= 24 else { return nil }
        var value = 0.0
        var scale = 0.0
        for byte in text {
            if byte == UInt8(ascii: "."), scale == 0 {
                scale = 0.1
            } else if let digit = digit(byte) {
                if scale == 0 {
                    value = value * 10 + Double(digit)
                } else {
                    value += Double(digit) * scale
                    scale /= 10
                }
            } else {
                return nil
            }
        }
        return text.isEmpty || value > Self.longestDurationMilliseconds ? nil : value
    }

    /// The longest `duration_ms` taken as written: a day.
    static let longestDurationMilliseconds = 86_400_000.0

    /// A line without the white space (and a CR) around it.
    private static func trimmed(_ line: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        var start = 0
        var end = line.count
        func isSpace(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
        }
        while start < end, isSpace(line[start]) { start += 1 }
        while end > start, isSpace(line[end - 1]) { end -= 1 }
        return UnsafeBufferPointer(rebasing: line[start..<end])
    }

    /// Whether the bytes are exactly `text`'s.
    private static func equals(_ bytes: UnsafeBufferPointer<UInt8>, _ text: StaticString) -> Bool {
        bytes.count == text.utf8CodeUnitCount && starts(bytes, with: text)
    }

    /// Whether the bytes start with `text`'s.
    private static func starts(_ bytes: UnsafeBufferPointer<UInt8>, with text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard bytes.count >= count, let base = bytes.baseAddress else { return count == 0 }
        return memcmp(base, text.utf8Start, count) == 0
    }
}

/// The distinct keys of a log, each parsed into its request once: lines are matched to a
/// key by their bytes (a hash, then a compare), so no string is made per line.
private struct KeyTable {
    /// The requests, in the order their keys were first seen.
    private(set) var requests: [AmodbRequest] = []
    /// The first entry of each hash; `next` chains the rest.
    private var first: [UInt64: Int32] = [:]
    private var next: [Int32] = []
    /// Each entry's key bytes, as `bytes[offsets[i]..<offsets[i + 1]]`.
    private var bytes: [UInt8] = []
    private var offsets: [Int] = [0]
    /// Each entry's index in `requests`, or -1 for a key that is none the proxy makes
    /// (remembered too, so it is parsed once).
    private var request: [Int32] = []

    /// The index of `key`'s request, or `nil` if `key` is no canonical key of a forwarded route.
    mutating func index(of key: UnsafeBufferPointer<UInt8>) -> Int32? {
        // FNV-1a.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        var entry = first[hash] ?? -1
        while entry >= 0 {
            let start = offsets[Int(entry)]
            let length = offsets[Int(entry) + 1] - start
            if length == key.count,
                length == 0
                    || bytes.withUnsafeBufferPointer({ memcmp($0.baseAddress! + start, key.baseAddress!, length) == 0 })
            {
                let found = request[Int(entry)]
                return found >= 0 ? found : nil
            }
            entry = next[Int(entry)]
        }
        // Escapes are never in a key the proxy writes (its characters need none), so the
        // bytes are the key's text as they are.
        let parsed = ReplayForwarder.request(ofKey: String(decoding: key, as: UTF8.self))
        if let parsed { requests.append(parsed) }
        let found: Int32 = parsed == nil ? -1 : Int32(requests.count - 1)
        next.append(first[hash] ?? -1)
        first[hash] = Int32(request.count)
        request.append(found)
        bytes.append(contentsOf: key)
        offsets.append(bytes.count)
        return found >= 0 ? found : nil
    }
}
