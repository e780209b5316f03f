import AmodbBytes
import AmodbCompression
import Glibc
import Testing

@testable import AmodbProxy

/// Access-log and event lines are written as bytes exactly as they were written as
/// strings: field order, quoting, escaping of hostile text, numbers.
struct LogLineTests {
    /// One access-log entry and the bytes of its line after the time, in both formats.
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let entry: AccessLogEntry
        let json: String
        let text: String
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "a gzip hit",
            entry: AccessLogEntry(
                method: "GET", route: .init(.trending), status: 200, cache: .hit, nanoseconds: 123_456, bytes: 10_240,
                encoding: .gzip,
                client: "127.0.0.1"),
            json:
                #","method":"GET","route":"/3/trending/{media_type}/{time_window}","status":200,"cache":"hit","duration_ms":0.123,"bytes":10240,"encoding":"gzip","client":"127.0.0.1"}"#,
            text:
                " method=GET route=/3/trending/{media_type}/{time_window} status=200 cache=hit duration_ms=0.123 bytes=10240 encoding=gzip client=127.0.0.1"
        ),
        Case(
            name: "a movie with its cache key, which holds = and &",
            entry: AccessLogEntry(
                method: "GET", route: .init(.movie), key: "/movie/550?append_to_response=credits&language=de-DE",
                status: 200,
                cache: .miss,
                nanoseconds: 41_000_000, bytes: 1937, client: "203.0.113.7"),
            json:
                #","method":"GET","route":"/3/movie/{movie_id}","key":"/movie/550?append_to_response=credits&language=de-DE","status":200,"cache":"miss","duration_ms":41,"bytes":1937,"encoding":"identity","client":"203.0.113.7"}"#,
            text:
                #" method=GET route=/3/movie/{movie_id} key="/movie/550?append_to_response=credits&language=de-DE" status=200 cache=miss duration_ms=41 bytes=1937 encoding=identity client=203.0.113.7"#
        ),
        Case(
            name: "a trending list whose key has no query",
            entry: AccessLogEntry(
                method: "GET", route: .init(.trending), key: "/trending/movie/week", status: 200, cache: .hit,
                nanoseconds: 84_000, bytes: 10_240,
                client: "127.0.0.1"),
            json:
                #","method":"GET","route":"/3/trending/{media_type}/{time_window}","key":"/trending/movie/week","status":200,"cache":"hit","duration_ms":0.084,"bytes":10240,"encoding":"identity","client":"127.0.0.1"}"#,
            text:
                " method=GET route=/3/trending/{media_type}/{time_window} key=/trending/movie/week status=200 cache=hit duration_ms=0.084 bytes=10240 encoding=identity client=127.0.0.1"
        ),
        Case(
            name: "a stale movie in br, 1.5 ms, IPv6 client",
            entry: AccessLogEntry(
                method: "HEAD", route: .init(.movie), status: 200, cache: .stale, nanoseconds: 1_500_000, bytes: 0,
                encoding: .br, client: "2001:db8::1"),
            json:
                #","method":"HEAD","route":"/3/movie/{movie_id}","status":200,"cache":"stale","duration_ms":1.5,"bytes":0,"encoding":"br","client":"2001:db8::1"}"#,
            text:
                " method=HEAD route=/3/movie/{movie_id} status=200 cache=stale duration_ms=1.5 bytes=0 encoding=br client=2001:db8::1"
        ),
        Case(
            name: "an unmatched path with a quote, a backslash, a newline, a space and =",
            entry: AccessLogEntry(
                method: "GET", route: .unmatched, path: "/a\"b\\c\nd e=f", status: 404, cache: .none,
                nanoseconds: 2_000_000_000, bytes: 93,
                client: "10.0.0.7"),
            json:
                #","method":"GET","route":"unmatched","path":"/a\"b\\c\nd e=f","status":404,"cache":"none","duration_ms":2000,"bytes":93,"encoding":"identity","client":"10.0.0.7"}"#,
            text:
                #" method=GET route=unmatched path="/a\"b\\c\nd e=f" status=404 cache=none duration_ms=2000 bytes=93 encoding=identity client=10.0.0.7"#
        ),
        Case(
            name: "a refused request: no method, control bytes and UTF-8 in the path",
            entry: AccessLogEntry(
                method: "-", route: .invalid, path: "/\u{1}\u{1F}\t\r\u{7F}é", status: 400, cache: .none,
                nanoseconds: 0, bytes: 0,
                client: "192.0.2.1"),
            json: #","method":"-","route":"invalid","path":"/\u0001\u001f\t\r"# + "\u{7F}é"
                + #"","status":400,"cache":"none","duration_ms":0,"bytes":0,"encoding":"identity","client":"192.0.2.1"}"#,
            text:
                " method=- route=invalid path=/\u{1}\u{1F}\t\r\u{7F}é status=400 cache=none duration_ms=0 bytes=0 encoding=identity client=192.0.2.1"
        ),
        Case(
            name: "an empty method, a path that is only =, a client with a quote; 0.9995 ms rounds up",
            entry: AccessLogEntry(
                method: "", route: .unmatched, path: "=", status: 999, cache: .miss, nanoseconds: 999_500, bytes: 1,
                client: "a\"b"),
            json:
                #","method":"","route":"unmatched","path":"=","status":999,"cache":"miss","duration_ms":1,"bytes":1,"encoding":"identity","client":"a\"b"}"#,
            text:
                #" method="" route=unmatched path="=" status=999 cache=miss duration_ms=1 bytes=1 encoding=identity client="a\"b""#
        ),
    ]

    private func line(_ entry: AccessLogEntry, _ format: LogFormat) -> String {
        var time = LogTime()
        var bytes: [UInt8] = []
        LogLine.write(format, maxBytes: entry.maxLineBytes, into: &bytes) { entry.write(to: &$0, time: &time) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `2026-11-30T09:12:34.567Z`: the time a line starts with.
    private func isTime(_ text: Substring) -> Bool {
        let pattern = Array("dddd-dd-ddTdd:dd:dd.dddZ".utf8)
        return text.utf8.count == pattern.count
            && zip(text.utf8, pattern).allSatisfy { byte, shape in
                shape == UInt8(ascii: "d") ? (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) : byte == shape
            }
    }

    @Test(arguments: cases)
    func anAccessLogEntryIsWrittenAsJSONByteForByte(_ test: Case) {
        let line = line(test.entry, .json)
        #expect(line.hasPrefix(#"{"time":""#))
        let afterTime = line.dropFirst(#"{"time":""#.count + 24)
        #expect(isTime(line.dropFirst(#"{"time":""#.count).prefix(24)))
        #expect(afterTime == "\"" + test.json)
    }

    /// The JSON line copies its constant text as literals; writing it field by field, as
    /// the text format is written, gives the same bytes, for every case and for entries
    /// with every route, outcome, coding and optional field.
    @Test func theJSONLineIsTheSameBytesAsItsFieldsWrittenOneByOne() {
        var entries = Self.cases.map(\.entry)
        for route in ProxyMetrics.RouteLabel.allCases {
            for cache in ProxyMetrics.CacheLabel.allCases {
                for encoding in [ContentCoding.identity, .gzip, .br] {
                    entries.append(
                        AccessLogEntry(
                            method: "HEAD", route: route, path: route == .unmatched ? "/x\"y" : nil,
                            key: route.isForwarded ? "/movie/1?language=de-DE" : nil, status: 304, cache: cache,
                            nanoseconds: 1_234_567, bytes: 0, encoding: encoding, client: "2001:db8::1",
                            user: cache == .hit ? "u-3f9a" : nil))
                }
            }
        }
        for entry in entries {
            var bytes: [UInt8] = []
            LogLine.write(.json, maxBytes: entry.maxLineBytes, into: &bytes) { entry.writeFieldByField(to: &$0) }
            let fieldByField = String(decoding: bytes, as: UTF8.self)
            let whole = line(entry, .json)
            let afterTime = whole.dropFirst(#"{"time":""#.count + 24 + 1)
            #expect("{" + afterTime.dropFirst(1) == fieldByField, "\(entry)")
        }
    }

    @Test(arguments: cases)
    func anAccessLogEntryIsWrittenAsTextByteForByte(_ test: Case) {
        let line = line(test.entry, .text)
        #expect(isTime(line.prefix(24)))
        #expect(line.dropFirst(24) == test.text)
    }

    @Test func fieldsThatFillTheRoomExactlyAreWritten() {
        // `{"n":7,"path":` is 14 bytes, the text escaped byte by byte 242 with its quotes,
        // and `}` 1: 257 in all, of which `LogLine` adds the two braces.
        let value = String(repeating: "\u{1}", count: 40)
        var bytes: [UInt8] = []
        LogLine.write(.json, maxBytes: 255, into: &bytes) { line in
            line.integer("n", 7)
            line.text("path", value)
        }
        #expect(bytes.count == 257)
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == #"{"n":7,"path":""# + String(repeating: #"\u0001"#, count: 40) + #""}"#)
    }

    @Test func aFieldPastItsRoomStopsTheProcessBeforeItIsWritten() async {
        // The room is the start of a larger allocation: a write past it would land in memory
        // that is there, so only a check made before the write stops the process.
        await #expect(processExitsWith: .failure) {
            let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
            var line = LogFields(.json, into: ByteWriter(into: UnsafeMutableRawBufferPointer(rebasing: memory[..<16])))
            line.text("path", String(repeating: "a", count: 64))
        }
        await #expect(processExitsWith: .failure) {
            let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
            var line = LogFields(.text, into: ByteWriter(into: UnsafeMutableRawBufferPointer(rebasing: memory[..<2])))
            line.integer("n", 1)
        }
    }

    @Test func anEntryThatNeedsMoreThanTheUsualRoomGetsIt() {
        let hostile = String(repeating: "\u{1}", count: 5_000)
        let entry = AccessLogEntry(
            method: hostile, route: .unmatched, path: hostile, status: 400, cache: .none, nanoseconds: 0, bytes: 0,
            client: hostile)
        let written = line(entry, .json)
        #expect(written.utf8.count > 3 * 5_000 * 6)
        #expect(written.hasSuffix(String(repeating: "\\u0001", count: 5_000) + "\"}"))
    }

    @Test(arguments: [
        (0, 0, "1970-01-01T00:00:00.000Z"),
        (1_764_448_745, 123_456_789, "2025-11-29T20:39:05.123Z"),
        (1_764_448_745, 7_000_000, "2025-11-29T20:39:05.007Z"),
        (951_868_799, 999_999_999, "2000-02-29T23:59:59.999Z"),
        (4_102_444_800, 50_000_000, "2100-01-01T00:00:00.050Z"),
    ])
    func timesAreWrittenInUTCWithMilliseconds(seconds: Int, nanoseconds: Int, expected: String) {
        var time = LogTime()
        #expect(write(&time, seconds, nanoseconds) == expected)
    }

    @Test func theCalendarIsReformattedWhenTheSecondChanges() {
        var time = LogTime()
        #expect(write(&time, 1_764_448_745, 1_000_000) == "2025-11-29T20:39:05.001Z")
        #expect(write(&time, 1_764_448_745, 998_000_000) == "2025-11-29T20:39:05.998Z")
        #expect(write(&time, 1_764_448_746, 0) == "2025-11-29T20:39:06.000Z")
        #expect(write(&time, 0, 0) == "1970-01-01T00:00:00.000Z")
    }

    private func write(_ time: inout LogTime, _ seconds: Int, _ nanoseconds: Int) -> String {
        var bytes: [UInt8] = []
        ByteWriter.append(to: &bytes, atMost: LogTime.length) {
            time.write(timespec(tv_sec: seconds, tv_nsec: nanoseconds), to: &$0)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test(arguments: [
        (
            LogFormat.json,
            #"{"time":"T","level":"warning","message":"log lines dropped: \"x\"","dropped":3,"window_seconds":0.25,"route":"a b"}"#
        ),
        (LogFormat.text, #"T warning log lines dropped: "x" dropped=3 window_seconds=0.25 route="a b""#),
    ])
    func anEventLineLeadsWithTimeLevelAndMessage(format: LogFormat, expected: String) {
        let line = format.line([
            ("time", "T"), ("level", "warning"), ("message", #"log lines dropped: "x""#), ("dropped", .integer(3)),
            ("window_seconds", .number(0.25)), ("route", "a b"),
        ])
        #expect(line == expected)
    }

    @Test(arguments: [
        0, 7, 9, 10, 99, 100, 999, 1000, 10_213, 999_999_999, 1_000_000_000, Int.max, Int.min, -1, -10, -12_345,
    ])
    func integersAreWrittenAsSwiftPrintsThem(value: Int) {
        #expect(LogFormat.json.line([("n", .integer(value))]) == #"{"n":"# + String(value) + "}")
    }

    @Test(arguments: [
        "", "a", String(repeating: "x", count: 64), String(repeating: "x", count: 65),
        String(repeating: "é", count: 40),
        "abc\"", String(repeating: "y", count: 63) + "\n", String(repeating: "z", count: 70) + "\\",
    ])
    func shortAndLongTextIsQuotedTheSameWay(text: String) {
        var expected = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": expected += "\\\""
            case "\\": expected += "\\\\"
            case "\n": expected += "\\n"
            default: expected.unicodeScalars.append(scalar)
            }
        }
        expected += "\""
        #expect(JSONText.quoted(text) == expected)
    }

    @Test(arguments: [
        ("\u{0}\u{8}\u{B}\u{C}\u{1B}", #""\u0000\u0008\u000b\u000c\u001b""#), ("\u{7F}", "\"\u{7F}\""),
        ("tab\there", #""tab\there""#),
        ("🎬 \"ok\"", #""🎬 \"ok\"""#),
    ])
    func jsonTextEscapesEveryControlByteAndNothingElse(text: String, quoted: String) {
        #expect(JSONText.quoted(text) == quoted)
    }
}
