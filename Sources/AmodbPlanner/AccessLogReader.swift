import AmodbHTTP
import AmodbModels
import AmodbProxy
import Foundation

/// Reads the proxy's access log back into the requests a replay takes (`PolicyReplay`):
/// for each line of a forwarded request that reached the cache, when it arrived and the
/// cache key it asked for.
///
/// A pure parser over bytes: `feed` takes a chunk of any size (lines may straddle chunks),
/// `finish` reads what is left and sorts. It runs offline, once per `amodb-proxy plan`, so
/// it is written to be read, in safe code: a line is scanned by index, and only the fields
/// a replay needs are looked at (`time`, `route`, `key`, `cache`, `duration_ms`); each
/// distinct key is parsed into an `AmodbRequest` once, so a log of a million lines reads
/// in about a second.
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
package struct AccessLogReader: Sendable {
    /// What a log held.
    package struct Contents: Sendable {
        /// The requests to replay, by arrival time; lines of one millisecond keep their order.
        package var requests: [ReplayRequest]
        /// Lines of forwarded routes written before keys were logged (the previous version).
        package var linesBeforeKeys: Int
        /// Lines of answers that asked amodb for nothing: health checks, metrics, other
        /// paths, requests refused before the cache.
        package var linesNotForwarded: Int
        /// Lines that are no access-log line of this proxy.
        package var linesUnreadable: Int
        /// Replayable lines that arrived before a line above them (sorted back into place).
        package var linesOutOfOrder: Int
    }

    /// Why a log could not be read.
    package struct Failure: Error, Sendable, CustomStringConvertible {
        /// What went wrong, naming the file.
        package let description: String
    }

    /// Longest line read; a longer one is unreadable (the proxy's lines are well under
    /// 4 KB: the only free text in them, a path, is cut at 256 bytes), and a file with no
    /// newline cannot grow the buffer without bound.
    package static let maxLineBytes = 64 * 1024

    /// Bytes read from a file at a time.
    static let chunkBytes = 1 << 20

    /// The longest `duration_ms` taken as written: a day.
    static let longestDurationMilliseconds = 86_400_000.0

    /// One replayable line: when its request arrived, its place in the file (for a stable
    /// sort) and its request's index in `requests`.
    private struct Arrival {
        var time: Double
        var line: Int
        var request: Int
    }

    private var arrivals: [Arrival] = []
    /// The bytes fed and not yet read: the start of a line not yet ended.
    private var pending: [UInt8] = []
    /// Whether the line being read has grown past `maxLineBytes` (its bytes are dropped).
    private var overlong = false
    /// The distinct requests, in the order their keys were first seen.
    private var requests: [AmodbRequest] = []
    /// Each key seen that the proxy makes, and its request's index in `requests`.
    private var requestIndex: [String: Int] = [:]
    /// The keys seen that the proxy never makes (remembered, so each is parsed once).
    private var foreignKeys: Set<String> = []
    private var linesBeforeKeys = 0
    private var linesNotForwarded = 0
    private var linesUnreadable = 0
    private var lastTime = -Double.infinity
    private var linesOutOfOrder = 0

    /// A reader before its first chunk.
    package init() {}

    /// Reads the log at `path` (`-`: standard input) in chunks.
    package static func read(path: String) throws(Failure) -> Contents {
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
            reader.feed(chunk)
        }
        return reader.finish()
    }

    /// Reads the lines a chunk ends, and keeps its unended tail for the next.
    package mutating func feed(_ chunk: some Collection<UInt8>) {
        // What was pending holds no newline (each call keeps only an unended tail), so the
        // search starts at the new bytes: a long line fed in small chunks is read in linear
        // time, not scanned again from its start with every chunk.
        var searchFrom = pending.count
        pending.append(contentsOf: chunk)
        var start = 0
        while let newline = pending[searchFrom...].firstIndex(of: UInt8(ascii: "\n")) {
            if overlong {
                // The rest of a line whose start was dropped.
                linesUnreadable += 1
                overlong = false
            } else {
                read(line: start..<newline)
            }
            start = newline + 1
            searchFrom = start
        }
        pending.removeSubrange(..<start)
        if pending.count > Self.maxLineBytes {
            overlong = true
            pending.removeAll(keepingCapacity: true)
        }
    }

    /// Reads the last line (if the log does not end with a newline) and returns what the log held.
    package mutating func finish() -> Contents {
        if overlong {
            linesUnreadable += 1
        } else if !pending.isEmpty {
            read(line: pending.indices)
        }
        pending = []
        overlong = false
        if linesOutOfOrder > 0 {
            // Stable: the line's place breaks ties, as the file's order had them.
            arrivals.sort { ($0.time, $0.line) < ($1.time, $1.line) }
        }
        return Contents(
            requests: arrivals.map { ReplayRequest(time: $0.time, request: requests[$0.request]) },
            linesBeforeKeys: linesBeforeKeys, linesNotForwarded: linesNotForwarded, linesUnreadable: linesUnreadable,
            linesOutOfOrder: linesOutOfOrder)
    }

    /// Reads the line at `range` of `pending`, without its newline.
    private mutating func read(line range: Range<Int>) {
        let line = Line(bytes: pending, range: Line.trimmed(pending, range))
        guard !line.range.isEmpty else { return }
        guard line.range.count <= Self.maxLineBytes,
            let fields = line.bytes[line.range.lowerBound] == UInt8(ascii: "{") ? line.jsonFields() : line.textFields(),
            let timeText = fields.time, let route = fields.route, let cache = fields.cache,
            var time = line.time(timeText)
        else {
            linesUnreadable += 1
            return
        }
        // Forwarded routes' templates are under the API root; every other label is not.
        guard line.starts(route, with: "/3/"), !line.equals(cache, "none") else {
            linesNotForwarded += 1
            return
        }
        guard let key = fields.key else {
            linesBeforeKeys += 1
            return
        }
        guard let request = request(ofKey: line.text(key)) else {
            linesUnreadable += 1
            return
        }
        // A line is written when its answer is: the request came `duration_ms` before. A
        // duration that is no number, or no request's, makes the line unreadable.
        if let duration = fields.duration {
            guard let milliseconds = line.milliseconds(duration) else {
                linesUnreadable += 1
                return
            }
            time -= milliseconds / 1000
        }
        if time < lastTime { linesOutOfOrder += 1 } else { lastTime = time }
        arrivals.append(Arrival(time: time, line: arrivals.count, request: request))
    }

    /// The index in `requests` of the request `key` stands for, parsed the first time the
    /// key is seen; `nil` if it is no canonical key of a forwarded route. Escapes are never
    /// in a key the proxy writes (its characters need none), so the text is the key as is.
    private mutating func request(ofKey key: String) -> Int? {
        if let index = requestIndex[key] { return index }
        guard !foreignKeys.contains(key) else { return nil }
        guard let request = ReplayForwarder.request(ofKey: key) else {
            foreignKeys.insert(key)
            return nil
        }
        requests.append(request)
        requestIndex[key] = requests.count - 1
        return requests.count - 1
    }
}

/// One line of the log, as a range of a buffer's bytes: its fields, and the values the
/// reader takes from them, each as a range of the same bytes.
private struct Line {
    let bytes: [UInt8]
    let range: Range<Int>

    /// The fields a replay needs; each is `nil` when the line does not have it.
    struct Fields {
        var time: Range<Int>?
        var route: Range<Int>?
        var key: Range<Int>?
        var cache: Range<Int>?
        var duration: Range<Int>?
    }

    /// `range` without the white space (and a CR) around it.
    static func trimmed(_ bytes: [UInt8], _ range: Range<Int>) -> Range<Int> {
        func isSpace(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
        }
        var start = range.lowerBound
        var end = range.upperBound
        while start < end, isSpace(bytes[start]) { start += 1 }
        while end > start, isSpace(bytes[end - 1]) { end -= 1 }
        return start..<end
    }

    // MARK: Fields

    /// The fields of a JSON object line, or `nil` if it is not one flat object of strings
    /// and scalars. A string with an escape is returned with its escapes (none of the
    /// fields read here has one when the proxy wrote it).
    func jsonFields() -> Fields? {
        var fields = Fields()
        var at = range.lowerBound + 1
        let end = range.upperBound
        func skipSpaces() {
            while at < end, bytes[at] == UInt8(ascii: " ") || bytes[at] == UInt8(ascii: "\t") { at += 1 }
        }
        skipSpaces()
        if at < end, bytes[at] == UInt8(ascii: "}") { return fields }
        while true {
            skipSpaces()
            guard let name = string(at: &at) else { return nil }
            skipSpaces()
            guard at < end, bytes[at] == UInt8(ascii: ":") else { return nil }
            at += 1
            skipSpaces()
            guard at < end else { return nil }
            let value: Range<Int>
            if bytes[at] == UInt8(ascii: "\"") {
                guard let text = string(at: &at) else { return nil }
                value = text
            } else {
                // A number, `true`, `false` or `null`: up to the next separator.
                let start = at
                while at < end, bytes[at] != UInt8(ascii: ","), bytes[at] != UInt8(ascii: "}"),
                    bytes[at] != UInt8(ascii: " ")
                { at += 1 }
                guard at > start, bytes[start] != UInt8(ascii: "{"), bytes[start] != UInt8(ascii: "[") else {
                    return nil
                }
                value = start..<at
            }
            take(name: name, value: value, into: &fields)
            skipSpaces()
            guard at < end else { return nil }
            if bytes[at] == UInt8(ascii: ",") {
                at += 1
                continue
            }
            guard bytes[at] == UInt8(ascii: "}") else { return nil }
            at += 1
            skipSpaces()
            return at == end ? fields : nil
        }
    }

    /// The fields of a text line (`time name=value …`), or `nil` if it is not one: a word
    /// without `=` after the time is an event line's level or message.
    func textFields() -> Fields? {
        var fields = Fields()
        let end = range.upperBound
        var at = range.lowerBound
        while at < end, bytes[at] != UInt8(ascii: " ") { at += 1 }
        fields.time = range.lowerBound..<at
        while at < end {
            while at < end, bytes[at] == UInt8(ascii: " ") { at += 1 }
            guard at < end else { break }
            let nameStart = at
            while at < end, bytes[at] != UInt8(ascii: "="), bytes[at] != UInt8(ascii: " ") { at += 1 }
            guard at < end, bytes[at] == UInt8(ascii: "="), at > nameStart else { return nil }
            let name = nameStart..<at
            at += 1
            let value: Range<Int>
            if at < end, bytes[at] == UInt8(ascii: "\"") {
                guard let text = string(at: &at) else { return nil }
                value = text
            } else {
                let start = at
                while at < end, bytes[at] != UInt8(ascii: " ") { at += 1 }
                value = start..<at
            }
            take(name: name, value: value, into: &fields)
        }
        return fields
    }

    /// The JSON string starting at `at` (a quote), escapes kept, without its quotes; `at`
    /// moves past its closing quote. `nil` if there is no string there, or it is not closed.
    private func string(at: inout Int) -> Range<Int>? {
        let end = range.upperBound
        guard at < end, bytes[at] == UInt8(ascii: "\"") else { return nil }
        let start = at + 1
        at = start
        while at < end {
            let byte = bytes[at]
            if byte == UInt8(ascii: "\"") {
                at += 1
                return start..<(at - 1)
            }
            at += byte == UInt8(ascii: "\\") ? 2 : 1
        }
        return nil
    }

    /// Keeps `value` if `name` is a field the reader needs.
    private func take(name: Range<Int>, value: Range<Int>, into fields: inout Fields) {
        switch name.count {
        case 3 where equals(name, "key"): fields.key = value
        case 4 where equals(name, "time"): fields.time = value
        case 5 where equals(name, "route"): fields.route = value
        case 5 where equals(name, "cache"): fields.cache = value
        case 11 where equals(name, "duration_ms"): fields.duration = value
        default: break
        }
    }

    // MARK: Values

    /// The bytes at `range` as text.
    func text(_ range: Range<Int>) -> String {
        String(decoding: bytes[range], as: UTF8.self)
    }

    /// Whether the bytes at `range` are exactly `text`'s.
    func equals(_ range: Range<Int>, _ text: String) -> Bool {
        bytes[range].elementsEqual(text.utf8)
    }

    /// Whether the bytes at `range` start with `text`'s.
    func starts(_ range: Range<Int>, with text: String) -> Bool {
        bytes[range].starts(with: text.utf8)
    }

    /// `2026-11-29T20:39:05.123Z` (RFC 3339: any number of fraction digits, or none; `Z` or
    /// a `±hh:mm` offset) as seconds since 1970.
    func time(_ text: Range<Int>) -> Double? {
        let start = text.lowerBound
        guard text.count >= 20, var seconds = calendarSecond(at: start) else { return nil }
        var at = start + 19
        var fraction = 0.0
        if bytes[at] == UInt8(ascii: ".") {
            at += 1
            var scale = 0.1
            let digits = at
            while at < text.upperBound, let digit = Self.digit(bytes[at]) {
                fraction += Double(digit) * scale
                scale /= 10
                at += 1
            }
            guard at > digits else { return nil }
        }
        guard at < text.upperBound else { return nil }
        switch bytes[at] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            guard at + 1 == text.upperBound else { return nil }
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard at + 6 == text.upperBound, bytes[at + 3] == UInt8(ascii: ":"),
                let hours = number(at: at + 1, width: 2), let minutes = number(at: at + 4, width: 2),
                hours < 24, minutes < 60
            else { return nil }
            let offset = hours * 3600 + minutes * 60
            seconds += bytes[at] == UInt8(ascii: "+") ? -offset : offset
        default:
            return nil
        }
        return Double(seconds) + fraction
    }

    /// `2026-11-29T20:39:05` at `start` (19 bytes, which the caller has) as seconds since
    /// 1970, checked field by field.
    private func calendarSecond(at start: Int) -> Int? {
        guard bytes[start + 4] == UInt8(ascii: "-"), bytes[start + 7] == UInt8(ascii: "-"),
            bytes[start + 10] == UInt8(ascii: "T") || bytes[start + 10] == UInt8(ascii: "t"),
            bytes[start + 13] == UInt8(ascii: ":"), bytes[start + 16] == UInt8(ascii: ":"),
            let year = number(at: start, width: 4), let month = number(at: start + 5, width: 2),
            let day = number(at: start + 8, width: 2), let hour = number(at: start + 11, width: 2),
            let minute = number(at: start + 14, width: 2), let second = number(at: start + 17, width: 2),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        return CivilTime.epochSeconds(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    }

    /// The decimal number of `width` digits at `start`.
    private func number(at start: Int, width: Int) -> Int? {
        var value = 0
        for index in start..<(start + width) {
            guard let digit = Self.digit(bytes[index]) else { return nil }
            value = value * 10 + digit
        }
        return value
    }

    private static func digit(_ byte: UInt8) -> Int? {
        let digit = byte &- UInt8(ascii: "0")
        return digit <= 9 ? Int(digit) : nil
    }

    /// `0.084`, `41`, `2000`: what `duration_ms` holds; `nil` for anything else, and for a
    /// duration longer than a day, which no request the proxy answered took (its deadlines
    /// are seconds): such a number would move the line's time anywhere.
    func milliseconds(_ text: Range<Int>) -> Double? {
        guard !text.isEmpty, text.count <= 24 else { return nil }
        var value = 0.0
        var scale = 0.0
        for byte in bytes[text] {
            if byte == UInt8(ascii: "."), scale == 0 {
                scale = 0.1
            } else if let digit = Self.digit(byte) {
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
        return value > AccessLogReader.longestDurationMilliseconds ? nil : value
    }
}
